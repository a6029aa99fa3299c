//! CUPTI discovery on fixture folders (SYNTHETIC: empty files named as the libraries are).

use super::*;
use std::collections::HashMap;
use std::fs;

fn touch(p: &Path) {
    fs::create_dir_all(p.parent().expect("parent")).expect("folders");
    fs::write(p, b"").expect("file");
}

/// A search with these environment variables and no default toolkit.
fn search<'a>(
    lookup: &'a dyn Fn(&str) -> Option<OsString>,
    program: Option<&'a Path>,
) -> Search<'a> {
    Search {
        explicit: None,
        env: lookup,
        program,
        default_toolkits: Vec::new(),
        windows: false,
    }
}

#[test]
fn finds_the_toolkit_of_cuda_path_before_cuda_home() {
    let d = tempfile::tempdir().expect("dir");
    let a = d.path().join("a");
    let b = d.path().join("b");
    touch(&b.join("extras/CUPTI/lib64/libcupti.so.12"));
    touch(&a.join("targets/x86_64-linux/lib/libcupti.so.12"));
    let env: HashMap<&str, OsString> = [("CUDA_PATH", a.clone().into()), ("CUDA_HOME", b.into())]
        .into_iter()
        .collect();
    let lookup = |k: &str| env.get(k).cloned();
    let r = search(&lookup, None).find().expect("search");
    assert_eq!(
        r.found,
        Some(a.join("targets/x86_64-linux/lib/libcupti.so.12"))
    );
    assert_eq!(r.found_via.as_deref(), Some("CUDA_PATH"));
    assert_eq!(r.searched, vec![a.join("extras/CUPTI/lib64")]);
}

#[test]
fn finds_the_wheel_in_the_commands_interpreter_environment() {
    let d = tempfile::tempdir().expect("dir");
    let venv = d.path().join("venv");
    touch(&venv.join("bin/python3"));
    touch(&venv.join("lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"));
    let env: HashMap<&str, OsString> = [("PATH", venv.join("bin").into_os_string())]
        .into_iter()
        .collect();
    let lookup = |k: &str| env.get(k).cloned();
    // Found through PATH for `python3`, and directly for a path.
    for program in [Path::new("python3").to_path_buf(), venv.join("bin/python3")] {
        let r = search(&lookup, Some(&program)).find().expect("search");
        let want = venv.join("lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12");
        assert_eq!(r.found, Some(want), "{program:?}");
        assert!(r.found_via.expect("via").contains("environment of"));
    }
    // Not a Python command: its environment is not searched.
    let r = search(&lookup, Some(Path::new("sh")))
        .find()
        .expect("search");
    assert_eq!(r.found, None);
}

#[test]
fn finds_the_wheel_of_virtual_env_and_conda_prefix() {
    let d = tempfile::tempdir().expect("dir");
    let conda = d.path().join("conda");
    touch(&conda.join("lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"));
    let env: HashMap<&str, OsString> = [("CONDA_PREFIX", conda.clone().into_os_string())]
        .into_iter()
        .collect();
    let lookup = |k: &str| env.get(k).cloned();
    let r = search(&lookup, None).find().expect("search");
    assert_eq!(r.found_via.as_deref(), Some("CONDA_PREFIX"));
}

#[test]
fn windows_names_the_dll() {
    let d = tempfile::tempdir().expect("dir");
    let cuda = d.path().join("CUDA/v12.8");
    touch(&cuda.join("extras/CUPTI/lib64/cupti64_2025.1.0.dll"));
    touch(&cuda.join("extras/CUPTI/lib64/libcupti.so.12"));
    let env: HashMap<&str, OsString> = [("CUDA_PATH", cuda.clone().into_os_string())]
        .into_iter()
        .collect();
    let lookup = |k: &str| env.get(k).cloned();
    let mut s = search(&lookup, None);
    s.windows = true;
    let r = s.find().expect("search");
    assert_eq!(
        r.found,
        Some(cuda.join("extras/CUPTI/lib64/cupti64_2025.1.0.dll"))
    );
}

#[test]
fn nothing_found_says_what_is_missing_and_how_to_get_it() {
    let d = tempfile::tempdir().expect("dir");
    let env: HashMap<&str, OsString> = [("CUDA_HOME", d.path().as_os_str().to_owned())]
        .into_iter()
        .collect();
    let lookup = |k: &str| env.get(k).cloned();
    let r = search(&lookup, None).find().expect("search");
    assert_eq!(r.found, None);
    let missing = r.missing.expect("sentence");
    assert!(
        missing.contains("pip install nvidia-cuda-cupti-cu12"),
        "{missing}"
    );
    assert!(missing.contains("CUDA toolkit"), "{missing}");
    assert_eq!(r.searched.len(), 3);
}

#[test]
fn explicit_path_is_the_library_or_its_folder_or_refused() {
    let d = tempfile::tempdir().expect("dir");
    let lib = d.path().join("x/libcupti.so.12");
    touch(&lib);
    let env: HashMap<&str, OsString> = HashMap::new();
    let lookup = |k: &str| env.get(k).cloned();
    for given in [lib.clone(), d.path().join("x")] {
        let mut s = search(&lookup, None);
        s.explicit = Some(&given);
        let r = s.find().expect("explicit");
        assert_eq!(r.found.as_ref(), Some(&lib));
        assert_eq!(r.found_via.as_deref(), Some("--cupti"));
    }
    let nothing = d.path().join("nothing");
    let mut s = search(&lookup, None);
    s.explicit = Some(&nothing);
    s.find()
        .expect_err("no such path")
        .assert_bad_input("--cupti");
}
