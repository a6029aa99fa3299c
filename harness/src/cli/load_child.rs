//! The hidden command a `load-register` case runs itself as: the registration of a file mapping
//! may not return, so it happens in this child, which the case kills at its deadline. Prints its
//! report as one JSON line; on an error, the sentence on stderr and exit 1.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args, Clone)]
pub struct LoadChildArgs {
    /// The file to map, register and copy.
    pub file: PathBuf,
    /// The GPU to copy it to.
    pub ordinal: u32,
}

#[cfg(target_os = "linux")]
pub fn load_child_command(a: &LoadChildArgs) -> Result<i32, crate::Error> {
    if !crate::cuda::driver_present() {
        eprintln!("pinscope: the CUDA driver library could not be loaded");
        return Ok(3);
    }
    match crate::strategy::load_register::child_load(&a.file, a.ordinal) {
        Ok(report) => {
            let line = serde_json::to_string(&report)
                .map_err(|e| crate::Error::Usage(format!("the child's report: {e}")))?;
            println!("{line}");
            Ok(0)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn load_child_command(_: &LoadChildArgs) -> Result<i32, crate::Error> {
    eprintln!("pinscope: the file-load modes run on Linux only");
    Ok(1)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The command a `load-register` case starts is the hidden one declared here.
    #[test]
    fn the_child_command_is_declared_and_hidden() {
        use clap::CommandFactory;
        let cmd = super::super::Cli::command();
        let child = cmd
            .find_subcommand(crate::strategy::load_register::CHILD_COMMAND)
            .expect("declared");
        assert!(child.is_hide_set());
    }
}
