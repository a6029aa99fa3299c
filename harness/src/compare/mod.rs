//! Matching runs from different machines case by case, with verdicts.

use crate::Error;

/// `pinscope compare`.
pub fn compare_command(args: &crate::cli::CompareArgs, quiet: bool) -> Result<i32, Error> {
    let _ = (args, quiet);
    Err(Error::Usage("`compare` is not built yet".into()))
}
