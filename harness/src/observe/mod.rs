//! `pinscope observe -- CMD`: runs an unmodified program, follows its process tree and samples
//! every memory observer until it exits; writes the observer timeline, the JSON sidecar and the
//! allocation events its processes' CUPTI injection library sent ([`inject`]). The program's
//! output, exit status and signals are its own (see [`signals`]).

/// The injection library's attribution logic, compiled here for its tests.
#[cfg(test)]
#[path = "../../inject/attribution.rs"]
mod attribution;
pub mod cupti;
#[cfg(any(target_os = "linux", windows))]
pub mod events;
pub mod inject;
mod sampler;
pub mod signals;
pub mod tree;
mod wddm;
pub mod wire;

use crate::Error;
use crate::error::StartFailure;
use crate::results::{
    AllocEvent, EVENTS_SUFFIX, Ending, EventsRecord, OBSERVED_SUFFIX, ObservedSidecar,
    OutputPolicy, TIMELINE_SUFFIX, TimelineWriter, with_suffix,
};
use sampler::Sampler;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// What `observe` was asked to do.
pub struct Options {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    pub interval: Duration,
    pub out_dir: PathBuf,
    pub cupti: Option<PathBuf>,
    /// pinscope's own command line, for the sidecar.
    pub command_line: Vec<String>,
}

/// What an observed run came to.
pub struct Observed {
    pub sidecar: ObservedSidecar,
    /// The files written, timeline first.
    pub files: [PathBuf; 3],
}

/// How often the command is checked for having exited between samples.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// Runs and observes the command; the results are written even when it fails or is killed.
pub fn observe(opts: &Options) -> Result<Observed, Error> {
    let program = opts
        .command
        .first()
        .ok_or_else(|| Error::Usage("name the command to observe after `--`".into()))?;
    let cupti = cupti::Search::here(opts.cupti.as_deref(), Some(Path::new(program))).find()?;
    let files = output_files(&opts.out_dir, program)?;
    let policy = OutputPolicy::default();
    let mut timeline = TimelineWriter::create(&policy, &files[0])?;
    let started_at = chrono::Local::now().to_rfc3339();
    let clock = Instant::now();
    let injection = inject::Injection::prepare(&cupti, clock_origin_ns());
    let mut command = Command::new(program);
    command.args(&opts.command[1..]);
    if let Ok(i) = &injection {
        command.envs(i.env());
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            // The timeline was created for this run a moment ago and holds only its header.
            let _ = std::fs::remove_file(&files[0]);
            if let Ok(i) = injection {
                // Stops the thread that would read the events.
                i.finish();
            }
            return Err(not_started(program, e));
        }
    };
    let mut early_notes = Vec::new();
    let signals = signals::hold().unwrap_or_else(|e| {
        early_notes.push(format!("{e}: Ctrl-C and SIGTERM reach pinscope unhandled"));
        signals::SignalGuard::inactive()
    });
    signals.command_started(child.id());
    let mut sampler = Sampler::for_this_machine();
    sampler.notes.extend(early_notes);
    let (status, samples, write_error) = sample_until_exit(
        &mut child,
        &mut sampler,
        &mut timeline,
        opts.interval,
        clock,
    )?;
    signals.command_ended();
    let (events, events_record) = collect_events(injection, &mut sampler.notes);
    let sidecar = ObservedSidecar {
        schema_version: ObservedSidecar::SCHEMA_VERSION,
        pinscope_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        finished_at: chrono::Local::now().to_rfc3339(),
        command: opts
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        command_line: opts.command_line.clone(),
        ending: ending(status),
        signals_received: signals.received(),
        machine: crate::platform::this_machine(false),
        interval_ms: u64::try_from(opts.interval.as_millis()).unwrap_or(u64::MAX),
        samples,
        max_processes: sampler.max_processes,
        unavailable: sampler.unavailable,
        cupti,
        events: events_record,
        notes: sampler.notes,
        timeline_file: file_name(&files[0]),
        events_file: file_name(&files[2]),
    };
    write_sidecar(&policy, &files[1], &sidecar)?;
    crate::results::write_events(&policy, &files[2], &events)?;
    if let Some(e) = write_error {
        return Err(e);
    }
    Ok(Observed { sidecar, files })
}

/// The command's start on the clock the injection library stamps events with.
fn clock_origin_ns() -> u64 {
    #[cfg(any(target_os = "linux", windows))]
    return events::monotonic_ns();
    #[cfg(not(any(target_os = "linux", windows)))]
    return 0;
}

/// The events the injection library sent, and the record of it; a stream's fault is a note.
fn collect_events(
    injection: Result<inject::Injection, String>,
    notes: &mut Vec<String>,
) -> (Vec<AllocEvent>, EventsRecord) {
    let injection = match injection {
        Ok(i) => i,
        Err(why) => {
            let record = EventsRecord {
                not_injected: Some(why),
                ..EventsRecord::default()
            };
            return (Vec::new(), record);
        }
    };
    let library = injection.library.clone();
    let outcome = injection.finish();
    #[cfg(any(target_os = "linux", windows))]
    {
        let r = outcome.received;
        notes.extend(r.faults);
        let record = EventsRecord {
            library: Some(library),
            not_injected: None,
            processes: r.processes,
            events: r.events.len() as u64,
            dropped: r.dropped,
        };
        (r.events, record)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = (outcome, notes);
        let record = EventsRecord {
            library: Some(library),
            ..EventsRecord::default()
        };
        (Vec::new(), record)
    }
}

/// Samples every `interval` until the child exits: its status, the number of samples, and the
/// first failure to write the timeline (observing goes on after it: the command is not left
/// running unwatched).
fn sample_until_exit(
    child: &mut Child,
    sampler: &mut Sampler,
    timeline: &mut TimelineWriter,
    interval: Duration,
    clock: Instant,
) -> Result<(ExitStatus, u64, Option<Error>), Error> {
    let pid = child.id();
    let mut samples = 0;
    let mut write_error = None;
    loop {
        let due = clock.elapsed();
        let points = sampler.sample(due.as_secs_f64(), pid);
        samples += 1;
        if write_error.is_none() {
            write_error = timeline.write(&points).err();
        }
        let next = due + interval;
        loop {
            if let Some(status) = child.try_wait().map_err(|e| {
                Error::System(format!(
                    "pinscope could not wait for the observed command: {e}"
                ))
            })? {
                return Ok((status, samples, write_error));
            }
            let left = next.saturating_sub(clock.elapsed());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(EXIT_POLL));
        }
    }
}

/// The three files of this run in `dir`, none of which exists yet.
fn output_files(dir: &Path, program: &std::ffi::OsStr) -> Result<[PathBuf; 3], Error> {
    crate::results::check_output_folder(dir)?;
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = dir.join(format!("{stamp}-observe-{}", sanitize(&name)));
    let files = [TIMELINE_SUFFIX, OBSERVED_SUFFIX, EVENTS_SUFFIX].map(|s| with_suffix(&stem, s));
    if let Some(f) = files.iter().find(|f| f.exists()) {
        return Err(Error::Output(format!(
            "{} already exists (another observed run started at the same second): run again, or choose another folder with -o",
            f.display()
        )));
    }
    Ok(files)
}

/// A program name as part of a file name: letters, digits, `.`, `-`, `_`, at most 40.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if s.is_empty() { "command".into() } else { s }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn write_sidecar(policy: &OutputPolicy, path: &Path, s: &ObservedSidecar) -> Result<(), Error> {
    use std::io::Write;
    let bytes = serde_json::to_vec_pretty(s)
        .map_err(|e| Error::Output(format!("writing {}: {e}", path.display())))?;
    let mut f = policy.create_new(path)?;
    f.write_all(&bytes)
        .and_then(|()| f.write_all(b"\n"))
        .map_err(|e| Error::io(path, e))
}

/// Why the command could not be started, as shells tell it.
fn not_started(program: &std::ffi::OsStr, e: std::io::Error) -> Error {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => StartFailure::NotFound,
        std::io::ErrorKind::PermissionDenied => StartFailure::NotExecutable,
        _ => StartFailure::Other(e.to_string()),
    };
    Error::NotStarted {
        program: crate::input::escape_text(&program.to_string_lossy()).into_owned(),
        why,
    }
}

/// How the command ended, from its exit status.
fn ending(status: ExitStatus) -> Ending {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Ending::Signal { signal };
        }
    }
    match status.code() {
        Some(code) => Ending::Exit { code },
        None => Ending::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_only_safe_characters() {
        assert_eq!(sanitize("python3.12"), "python3.12");
        assert_eq!(sanitize("a b/c"), "a_b_c");
        assert_eq!(sanitize(""), "command");
        assert_eq!(sanitize(&"x".repeat(99)).len(), 40);
    }

    #[test]
    fn output_files_refuse_a_file_as_folder() {
        let d = tempfile::tempdir().expect("dir");
        let f = d.path().join("file");
        std::fs::write(&f, "x").expect("file");
        let e = output_files(&f, std::ffi::OsStr::new("sh")).expect_err("a file");
        e.assert_bad_input("is a file");
        let files = output_files(d.path(), std::ffi::OsStr::new("sh")).expect("folder");
        assert!(files[0].to_string_lossy().ends_with(".timeline.csv"));
    }
}
