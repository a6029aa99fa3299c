//! Why a case failed, as data: the CUDA call and the code it returned, the phase of the case it
//! failed in, the counts of a data check. The `status` column's text (`failed: <sentence>`) is
//! rendered from it, and a results file's text is read back into it once, when the file is
//! loaded ([`Failure::parse`]); claims and metrics read the fields, never the sentence.

use crate::cuda::ErrorCode;
use crate::scenario::Lane;
use crate::units::format_size;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A failed case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// On the sum row of a multi-GPU case: the GPU whose case failed (`GPU 1: ` before the cause).
    pub gpu: Option<u32>,
    pub cause: Cause,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A CUDA call (or a check pinscope makes around one) failed in a phase of the case.
    Call {
        call: String,
        code: ErrorCode,
        phase: Phase,
    },
    /// The case's `device_hold` could not be allocated in full (sizes in bytes, as precise as the
    /// sentence gives them: two decimals of the largest binary unit).
    DeviceHold {
        call: String,
        code: ErrorCode,
        allocated: u64,
        wanted: u64,
        free: u64,
    },
    /// 32-bit words wrong after the transfer of `lane`, of `words`; the first bad word's index.
    WrongWords {
        bad_words: u64,
        words: u64,
        lane: Lane,
        first: Option<u64>,
    },
    /// Copies that returned success and left wrong data, of all copies made (pinned churn).
    WrongCopies { bad: u32, copies: u32 },
    /// The worker thread of a GPU ended before handing back its result.
    WorkerLost { gpu: u32 },
    /// A sentence none of the forms above reads (a file written by another version of
    /// pinscope), kept as written.
    Other(String),
}

/// The phase of a case a call failed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    HostAllocation,
    MaxAllocProbe,
    DeviceAllocation,
    /// Host and device memory, in files written before the two were told apart.
    Allocation,
    OwnContext,
    Transfer,
    Verification,
    Free,
    /// Reading the free device memory the case's `device_hold` is relative to.
    DeviceHold,
}

impl Phase {
    const ALL: [Phase; 9] = [
        Phase::HostAllocation,
        Phase::MaxAllocProbe,
        Phase::DeviceAllocation,
        Phase::Allocation,
        Phase::OwnContext,
        Phase::Transfer,
        Phase::Verification,
        Phase::Free,
        Phase::DeviceHold,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Phase::HostAllocation => "host allocation",
            Phase::MaxAllocProbe => "max-alloc probe",
            Phase::DeviceAllocation => "device allocation",
            Phase::Allocation => "allocation",
            Phase::OwnContext => "own context",
            Phase::Transfer => "transfer",
            Phase::Verification => "verification",
            Phase::Free => "free",
            Phase::DeviceHold => "device_hold",
        }
    }
    fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl Failure {
    pub fn new(cause: Cause) -> Failure {
        Failure { gpu: None, cause }
    }

    /// A CUDA call that failed in `phase`.
    pub fn call(e: &crate::cuda::CudaError, phase: Phase) -> Failure {
        Failure::new(Cause::Call {
            call: e.call.to_string(),
            code: e.code.clone(),
            phase,
        })
    }

    /// The same failure, said of GPU `gpu` (on a sum row of a multi-GPU case).
    pub fn on_gpu(&self, gpu: u32) -> Failure {
        Failure {
            gpu: Some(gpu),
            cause: self.cause.clone(),
        }
    }

    /// The code of the CUDA call that failed, if a call did.
    pub fn code(&self) -> Option<&ErrorCode> {
        match &self.cause {
            Cause::Call { code, .. } | Cause::DeviceHold { code, .. } => Some(code),
            _ => None,
        }
    }

    /// True when a CUDA call returned `CUDA_ERROR_OUT_OF_MEMORY`.
    pub fn is_out_of_memory(&self) -> bool {
        self.code().is_some_and(ErrorCode::is_out_of_memory)
    }

    /// Copies that left wrong data (pinned churn): `k` of "data mismatch in k of N copies".
    pub fn wrong_copies(&self) -> Option<u32> {
        match self.cause {
            Cause::WrongCopies { bad, .. } => Some(bad),
            _ => None,
        }
    }

    /// The failure whose sentence is `text`; a sentence no form reads is kept as
    /// [`Cause::Other`], so that writing it again gives the same text.
    pub fn parse(text: &str) -> Failure {
        let (gpu, rest) = split_gpu(text);
        let cause = Cause::parse(rest)
            .filter(|c| c.to_string() == rest)
            .unwrap_or_else(|| Cause::Other(rest.to_string()));
        let failure = Failure { gpu, cause };
        if failure.to_string() == text {
            failure
        } else {
            Failure::new(Cause::Other(text.to_string()))
        }
    }
}

/// `GPU 1: rest` → (Some(1), rest); other text as it is.
fn split_gpu(text: &str) -> (Option<u32>, &str) {
    text.strip_prefix("GPU ")
        .and_then(|t| t.split_once(": "))
        .and_then(|(n, rest)| Some((Some(n.parse().ok()?), rest)))
        .unwrap_or((None, text))
}

impl Cause {
    fn parse(text: &str) -> Option<Cause> {
        if let Some(rest) = text.strip_prefix("data mismatch in ") {
            let (bad, rest) = rest.split_once(" of ")?;
            let copies = rest.strip_suffix(" copies")?;
            return Some(Cause::WrongCopies {
                bad: bad.parse().ok()?,
                copies: copies.parse().ok()?,
            });
        }
        if let Some(rest) = text.strip_prefix("data mismatch: ") {
            return wrong_words(rest);
        }
        if let Some(rest) = text.strip_prefix("the worker thread of GPU ") {
            let gpu = rest.strip_suffix(" ended unexpectedly")?.parse().ok()?;
            return Some(Cause::WorkerLost { gpu });
        }
        call_failure(text)
    }
}

/// `{bad} of {words} words wrong after {lane} (first at word {first|?})`.
fn wrong_words(rest: &str) -> Option<Cause> {
    let (bad, rest) = rest.split_once(" of ")?;
    let (words, rest) = rest.split_once(" words wrong after ")?;
    let (lane, rest) = rest.split_once(" (first at word ")?;
    let first = rest.strip_suffix(')')?;
    Some(Cause::WrongWords {
        bad_words: bad.parse().ok()?,
        words: words.parse().ok()?,
        lane: Lane::parse(lane)?,
        first: if first == "?" {
            None
        } else {
            Some(first.parse().ok()?)
        },
    })
}

/// `{call} failed with {code} ({phase})`, or the `device_hold` form
/// `{call} failed with {code} (device_hold: {a} of {b} allocated, {c} was free)`.
fn call_failure(text: &str) -> Option<Cause> {
    let (call, rest) = text.split_once(" failed with ")?;
    let (code, detail) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    let (call, code) = (call.to_string(), ErrorCode::parse(code));
    if let Some(sizes) = detail.strip_prefix("device_hold: ") {
        let (allocated, rest) = sizes.split_once(" of ")?;
        let (wanted, rest) = rest.split_once(" allocated, ")?;
        let free = rest.strip_suffix(" was free")?;
        return Some(Cause::DeviceHold {
            call,
            code,
            allocated: size_of_text(allocated)?,
            wanted: size_of_text(wanted)?,
            free: size_of_text(free)?,
        });
    }
    Some(Cause::Call {
        call,
        code,
        phase: Phase::parse(detail)?,
    })
}

/// Bytes of a size as [`format_size`] writes it (`80 GiB`, `147.50 GiB`, `512 B`).
fn size_of_text(s: &str) -> Option<u64> {
    const UNITS: [(&str, f64); 5] = [
        ("B", 1.0),
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
        ("TiB", 1099511627776.0),
    ];
    let (v, unit) = s.split_once(' ')?;
    let m = UNITS.iter().find(|(u, _)| *u == unit)?.1;
    let v: f64 = v.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * m).round() as u64)
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Call { call, code, phase } => {
                write!(f, "{call} failed with {code} ({})", phase.name())
            }
            Cause::DeviceHold {
                call,
                code,
                allocated,
                wanted,
                free,
            } => write!(
                f,
                "{call} failed with {code} (device_hold: {} of {} allocated, {} was free)",
                format_size(*allocated),
                format_size(*wanted),
                format_size(*free)
            ),
            Cause::WrongWords {
                bad_words,
                words,
                lane,
                first,
            } => write!(
                f,
                "data mismatch: {bad_words} of {words} words wrong after {} (first at word {})",
                lane.name(),
                first.map_or("?".into(), |w| w.to_string())
            ),
            Cause::WrongCopies { bad, copies } => {
                write!(f, "data mismatch in {bad} of {copies} copies")
            }
            Cause::WorkerLost { gpu } => {
                write!(f, "the worker thread of GPU {gpu} ended unexpectedly")
            }
            Cause::Other(text) => f.write_str(text),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = self.gpu {
            write!(f, "GPU {g}: ")?;
        }
        self.cause.fmt(f)
    }
}

/// Serialised as its sentence, as the CSV writes it.
impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Failure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|t| Failure::parse(&t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::CudaError;
    use cudarc::driver::sys::CUresult;

    /// Every sentence pinscope writes, read back into the same data.
    #[test]
    fn each_form_reads_back_into_its_data() {
        let oom = CudaError::driver("cuMemAlloc", CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        let forms = [
            Failure::call(&oom, Phase::DeviceAllocation),
            Failure::call(
                &CudaError::new("cuMemcpyHtoD", "range outside the buffer"),
                Phase::Transfer,
            ),
            Failure::call(
                &CudaError::new("cuMemAlloc", "INVALID_FAULT_SPEC (bad (spec))"),
                Phase::Free,
            ),
            Failure::new(Cause::DeviceHold {
                call: "cuMemAlloc".into(),
                code: oom.code.clone(),
                allocated: 80 << 30,
                wanted: (147 << 30) + (1 << 29),
                free: 140 << 30,
            }),
            Failure::new(Cause::WrongWords {
                bad_words: 12,
                words: 1 << 20,
                lane: Lane::D2h,
                first: Some(7),
            }),
            Failure::new(Cause::WrongWords {
                bad_words: 1,
                words: 4,
                lane: Lane::H2d,
                first: None,
            }),
            Failure::new(Cause::WrongCopies {
                bad: 19,
                copies: 20,
            }),
            Failure::new(Cause::WorkerLost { gpu: 3 }).on_gpu(3),
            Failure::call(&oom, Phase::Allocation).on_gpu(1),
        ];
        for f in forms {
            let text = f.to_string();
            assert_eq!(Failure::parse(&text), f, "{text}");
        }
    }

    #[test]
    fn sentences_are_the_ones_files_hold() {
        let f = Failure::parse(
            "cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (device_hold: 80 GiB of 147.50 GiB allocated, 140.37 GiB was free)",
        );
        assert!(f.is_out_of_memory());
        assert!(matches!(f.cause, Cause::DeviceHold { allocated, .. } if allocated == 80 << 30));
        let f =
            Failure::parse("GPU 1: cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (allocation)");
        assert_eq!(f.gpu, Some(1));
        assert!(f.is_out_of_memory());
        let f = Failure::parse("data mismatch in 19 of 20 copies");
        assert_eq!(f.wrong_copies(), Some(19));
        assert!(!f.is_out_of_memory());
    }

    #[test]
    fn other_sentences_are_kept_as_written() {
        for text in [
            "CUDA_ERROR_OUT_OF_MEMORY at cuMemHostAlloc",
            "cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (somewhere new)",
            "data mismatch in 19 of 20 copies!",
            "GPU x: data mismatch in 1 of 2 copies",
            "cuMemAlloc failed with X (device_hold: 1.0 GiB of 2 GiB allocated, 3 GiB was free)",
            "",
        ] {
            let f = Failure::parse(text);
            assert_eq!(f.to_string(), text);
            assert_eq!(f.cause, Cause::Other(text.to_string()), "{text}");
            assert!(!f.is_out_of_memory() && f.wrong_copies().is_none());
        }
    }
}
