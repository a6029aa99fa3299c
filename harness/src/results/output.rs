//! Writing output files safely: pinscope only ever replaces *regular* files. A symbolic link, a
//! FIFO, a device node, a socket or a folder at an output path is refused with one sentence
//! (exit 2) and left as it was; regular files are replaced atomically (temporary file + rename).

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What is at `path` when it is something pinscope must not replace, in words.
fn not_regular(path: &Path) -> Result<Option<&'static str>, Error> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            let t = m.file_type();
            Ok(if t.is_file() {
                None
            } else if t.is_dir() {
                Some("a folder")
            } else if t.is_symlink() {
                Some("a symbolic link")
            } else {
                Some("not a regular file (a device, FIFO or socket)")
            })
        }
        // Nothing there yet, or a file where a folder of the path should be: `create_parent`
        // says which folder cannot be made.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Refuses an output path that is not a regular file or a new name: a folder, a symbolic link,
/// a FIFO, a device; also a path ending in a separator (`out/`), which names a folder.
pub fn check_output_path(path: &Path) -> Result<(), Error> {
    let shown = path.display();
    let text = path.as_os_str().to_string_lossy();
    if text.is_empty() {
        return Err(Error::Output(
            "the output path is empty: name a file".into(),
        ));
    }
    if text.ends_with(std::path::is_separator) {
        return Err(Error::Output(format!(
            "{shown} names a folder: name the output file, such as {shown}index.html"
        )));
    }
    if let Some(what) = not_regular(path)? {
        let hint = if what == "a folder" {
            format!(
                ": name a file inside it, such as {}",
                path.join("index.html").display()
            )
        } else {
            ": pinscope only replaces regular files, so choose another path".to_string()
        };
        return Err(Error::Output(format!(
            "{shown} is {what}, so pinscope will not write over it{hint}"
        )));
    }
    Ok(())
}

/// Creates the folder an output file goes in, with a sentence that names the file.
pub fn create_parent(path: &Path) -> Result<(), Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => {
                    "a file is in the way".to_string()
                }
                _ => e.to_string(),
            };
            Error::Output(format!(
                "cannot create the folder {} for {} ({why}): check the path and the permissions of the folder above it",
                dir.display(),
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Opens an output file for writing from the start (a new file, or a regular one truncated).
pub fn create_output_file(path: &Path) -> Result<File, Error> {
    check_output_path(path)?;
    create_parent(path)?;
    File::create(path).map_err(|e| Error::io(path, e))
}

/// The temporary file `<name>.tmp` beside `path`, created new. A regular file left there by a
/// writer that died is removed first; anything else there (a link, a FIFO) is refused, never
/// followed.
fn create_temp(path: &Path) -> Result<(PathBuf, File), Error> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    match not_regular(&tmp)? {
        Some(what) => {
            return Err(Error::Output(format!(
                "{} is {what}, in the way of the temporary file pinscope writes before replacing {}: remove it",
                tmp.display(),
                path.display()
            )));
        }
        None if tmp.exists() => std::fs::remove_file(&tmp).map_err(|e| Error::io(&tmp, e))?,
        None => {}
    }
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| Error::io(&tmp, e))?;
    Ok((tmp, f))
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader never sees half
/// a file. Refuses (exit 2) when something other than a regular file is at `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    check_output_path(path)?;
    create_parent(path)?;
    let (tmp, mut f) = create_temp(path)?;
    let written = f
        .write_all(bytes)
        // On disk before the rename, so the new name never points at a half-written file.
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(path, e));
    drop(f);
    let done = written.and_then(|()| {
        // Checked again just before the rename: the window for a swap is as small as it gets.
        check_output_path(path)?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_replaced_and_no_temp_file_is_left() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("a.html");
        std::fs::write(&p, "old").expect("write");
        write_atomic(&p, b"new").expect("replaced");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "new");
        let names: Vec<_> = std::fs::read_dir(d.path()).expect("dir").collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_folder_is_refused_and_kept() {
        let d = tempfile::tempdir().expect("tempdir");
        let e = write_atomic(d.path(), b"x").expect_err("a folder");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("is a folder"), "{e}");
        assert!(d.path().is_dir());
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
}
