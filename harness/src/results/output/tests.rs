use super::*;
use crate::test_files::{entry_names as names, temp_path};

#[test]
fn regular_files_are_replaced_and_no_temp_file_is_left() {
    let (d, p) = temp_path("a.html");
    std::fs::write(&p, "old").expect("write");
    write_atomic(&p, b"new").expect("replaced");
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "new");
    assert_eq!(names(d.path()), ["a.html"]);
}

#[test]
fn a_folder_is_refused_and_kept() {
    let d = tempfile::tempdir().expect("tempdir");
    let e = write_atomic(d.path(), b"x").expect_err("a folder");
    e.assert_bad_input("is a folder");
    assert!(d.path().is_dir());
}

/// A folder is told to name a file inside it; anything else that is not a regular file is told
/// to choose another path.
#[test]
fn what_is_in_the_way_picks_the_hint() {
    let d = tempfile::tempdir().expect("tempdir");
    let e = check_output_path(d.path())
        .expect_err("a folder")
        .to_string();
    let inside = d.path().join("index.html").display().to_string();
    assert!(
        e.contains(&format!("name a file inside it, such as {inside}")),
        "{e}"
    );
    #[cfg(unix)]
    {
        let link = d.path().join("link.html");
        std::os::unix::fs::symlink(d.path().join("absent"), &link).expect("symlink");
        let e = check_output_path(&link).expect_err("a link").to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(
            e.contains("only replaces regular files, so choose another path"),
            "{e}"
        );
        assert!(!e.contains("inside it"), "{e}");
    }
}

#[test]
fn a_trailing_separator_names_a_folder() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = format!(
        "{}{}",
        d.path().join("new").display(),
        std::path::MAIN_SEPARATOR
    );
    let e = write_atomic(Path::new(&p), b"x").expect_err("a folder name");
    assert!(e.to_string().contains("names a folder"), "{e}");
    assert!(!d.path().join("new").exists());
}

#[test]
#[cfg_attr(
    windows,
    ignore = "under Wine one of the spellings (a hard link or `.`) is not recognised as the input; not yet checked on real Windows"
)]
fn an_input_is_never_replaced_whatever_its_spelling() {
    let (d, csv) = temp_path("run.csv");
    std::fs::write(&csv, "measured").expect("write");
    let mut inputs = Inputs::default();
    inputs.add_results(&csv);
    let policy = OutputPolicy::new(inputs, true);
    // The same file spelled differently, through a hard link, and the companions (the sidecar
    // does not exist yet: writing it would make the page a sidecar of run.csv).
    let other_spelling = d.path().join(".").join("run.csv");
    let link = d.path().join("hard.csv");
    std::fs::hard_link(&csv, &link).expect("hard link");
    for out in [
        csv.clone(),
        other_spelling,
        link,
        d.path().join("run.json"),
        d.path().join("run.samples.csv"),
    ] {
        let e = policy.write(&out, b"<html>").expect_err("an input");
        assert_eq!(e.exit_code(), 2, "{e}");
        let s = e.to_string();
        assert!(s.starts_with(&out.display().to_string()), "{s}");
        assert!(s.contains("this command reads"), "{s}");
    }
    assert_eq!(std::fs::read_to_string(&csv).expect("read"), "measured");
    assert!(!d.path().join("run.json").exists());
    // Another name in the same folder is fine.
    policy
        .write(&d.path().join("index.html"), b"<html>")
        .expect("not an input");
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_refused_unless_forced_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("ro.html");
    std::fs::write(&p, "precious").expect("write");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let e = write_atomic(&p, b"new").expect_err("read-only");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("is read-only"), "{e}");
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "precious");
    OutputPolicy::new(Inputs::default(), true)
        .write(&p, b"new")
        .expect("forced");
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "new");
    let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o444, "the replaced file lost its mode");
}

#[cfg(unix)]
#[test]
fn a_new_file_gets_an_ordinary_mode_not_a_private_one() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("new.html");
    write_atomic(&p, b"x").expect("written");
    let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
    assert_ne!(
        mode & 0o044,
        0,
        "mode {mode:o}: others cannot read a new report"
    );
}

#[test]
fn a_file_pinscope_did_not_create_is_never_deleted() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("index.html");
    let mine = d.path().join("index.html.tmp");
    std::fs::write(&mine, "the user's own").expect("write");
    write_atomic(&p, b"page").expect("written");
    assert_eq!(
        std::fs::read_to_string(&mine).expect("kept"),
        "the user's own"
    );
    assert_eq!(names(d.path()), ["index.html", "index.html.tmp"]);
}

#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_place_is_named_as_the_user_gave_it() {
    let e = write_atomic(Path::new("/proc/x"), b"x").expect_err("/proc");
    let s = e.to_string();
    assert!(s.starts_with("/proc/x cannot be written"), "{s}");
    assert!(!s.contains("tmp"), "{s}");
    assert_eq!(e.exit_code(), 2);
}

/// 50 pairs of writers, each pair on one path at the same time: both succeed, the file holds
/// one writer's whole content, no temporary file is left and a foreign `*.tmp` survives.
#[test]
#[cfg_attr(
    windows,
    ignore = "on Windows (Wine) a rename over a file another writer is renaming at that moment fails with permission denied: one of two concurrent writers is refused"
)]
fn concurrent_writers_of_one_path_each_leave_a_complete_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let content = |pair: usize, who: u8| -> Vec<u8> {
        let mut v = vec![b'a' + who; 64 * 1024];
        v.extend(format!("pair {pair} writer {who}").bytes());
        v
    };
    for pair in 0..50 {
        std::fs::write(d.path().join(format!("r{pair}.html.tmp")), "foreign").expect("write");
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..50)
            .flat_map(|pair| [(pair, 0u8), (pair, 1u8)])
            .map(|(pair, who)| {
                let path = d.path().join(format!("r{pair}.html"));
                let bytes = content(pair, who);
                s.spawn(move || write_atomic(&path, &bytes).map_err(|e| e.to_string()))
            })
            .collect();
        for h in handles {
            let r = h.join().expect("writer thread");
            assert!(r.is_ok(), "a writer failed: {r:?}");
        }
    });
    for pair in 0..50 {
        let got = std::fs::read(d.path().join(format!("r{pair}.html"))).expect("read");
        assert!(
            got == content(pair, 0) || got == content(pair, 1),
            "r{pair}.html is not one writer's whole content"
        );
        let foreign = std::fs::read_to_string(d.path().join(format!("r{pair}.html.tmp")));
        assert_eq!(foreign.ok().as_deref(), Some("foreign"));
    }
    assert_eq!(names(d.path()).len(), 100, "{:?}", names(d.path()));
}

#[test]
fn a_results_folder_that_is_a_file_is_refused_before_any_work() {
    let (d, f) = temp_path("file.csv");
    std::fs::write(&f, "x").expect("write");
    let e = check_output_folder(&f).expect_err("a file");
    e.assert_bad_input("is a file, not a folder");
    let e = check_output_folder(&f.join("below")).expect_err("below a file");
    assert_eq!(e.exit_code(), 2);
    check_output_folder(&d.path().join("new/deeper")).expect("can be made");
    assert!(!d.path().join("new").exists(), "the check created a folder");
    assert_eq!(names(d.path()), ["file.csv"]);
}

#[cfg(target_os = "linux")]
#[test]
fn a_results_folder_where_nothing_can_be_created_is_refused() {
    let e = check_output_folder(Path::new("/proc/x")).expect_err("/proc");
    assert!(e.to_string().starts_with("/proc/x cannot hold"), "{e}");
}
