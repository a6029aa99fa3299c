//! `pinscope info`: this machine, its GPU and observers; with `--probe`, max allocatable device
//! memory and the pinned ceiling.

use super::InfoArgs;
use crate::Error;
use crate::platform::Machine;
use crate::probe::{self, GpuContext, Observers};
use crate::run::{Runner, ceiling_cap, max_allocatable, open_runner, pinned_ceiling};
use crate::units::{MIB, format_size};
use std::fmt::Write as _;

/// Why the GPU settings are unavailable on a machine where no GPU could be opened.
pub(super) const NO_GPU: &str = "no usable GPU";

/// The one GPU `--device` names, read as `run --device` reads it; `command` (`info`, `check`)
/// names who refuses several.
pub(super) fn one_device(text: &str, command: &str) -> Result<u32, Error> {
    use crate::platform::DeviceSelection;
    match DeviceSelection::parse(text).map_err(|e| Error::Usage(format!("--device {text}: {e}")))? {
        DeviceSelection::List(one) if one.len() == 1 => Ok(one[0]),
        several => Err(Error::Usage(format!(
            "--device {several}: {command} looks at one GPU at a time: give one CUDA device index such as 0, once per GPU"
        ))),
    }
}

/// `info --json`: the fields `check --json` opens with, then the machine and its observers.
#[derive(serde::Serialize)]
struct InfoReport<'a> {
    #[serde(flatten)]
    envelope: super::Envelope,
    machine: &'a Machine,
    observers: Vec<probe::ObserverStatus>,
    pin_budget: probe::PinBudget,
    /// The record `--budget` named, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_pin_budget: Option<super::budget_record::MeasuredBudget>,
}

/// `pinscope info`.
pub fn info_command(args: &InfoArgs) -> Result<i32, Error> {
    let device = one_device(&args.device, "info")?;
    let measured = args
        .budget
        .as_deref()
        .map(super::budget_record::measured_budget)
        .transpose()?;
    let mut machine = crate::platform::this_machine(args.anonymize);
    let mut no_gpu = None;
    let mut runner = match open_runner(device, args.anonymize) {
        Ok(s) => Some(s),
        Err(Error::NoGpu(why)) => {
            machine.settings = Some(crate::run::record_settings_without_gpu(NO_GPU));
            no_gpu = Some(why);
            None
        }
        Err(e) => return Err(e),
    };
    if let Some(s) = &mut runner {
        s.read_settings_under_load();
        machine = s.machine.clone();
    }
    let code = if runner.is_some() { 0 } else { 3 };
    let platform = machine
        .platform
        .known()
        .unwrap_or(crate::platform::Platform::Other);
    let budget = probe::pin_budget(platform, runner.as_ref().and_then(|s| s.gpu.facts().luid));
    let observers = match &runner {
        Some(s) => s.observers.statuses(),
        None => Observers::for_this_machine(GpuContext::default()).statuses(),
    };
    if args.wants_json() {
        // With --json, stdout holds only the JSON: the reason goes into it (and to stderr).
        if let Some(why) = &no_gpu {
            eprintln!("GPU: none usable — {why}");
        }
        let report = InfoReport {
            envelope: super::Envelope::new(code, no_gpu),
            machine: &machine,
            observers,
            pin_budget: budget,
            measured_pin_budget: measured,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::Usage(format!("the machine's JSON could not be written ({e})")))?;
        super::print_out(&format!("{text}\n"))?;
        return Ok(code);
    }
    let mut out = String::new();
    if let Some(why) = &no_gpu {
        let _ = writeln!(out, "GPU: none usable — {why}");
    }
    write_machine(&mut out, &machine);
    if let Some(settings) = &machine.settings {
        write_settings(&mut out, settings);
    }
    write_budget(&mut out, &budget);
    if let Some(m) = &measured {
        super::budget_record::write_measured_budget(&mut out, m);
    }
    match &runner {
        Some(s) => {
            let _ = writeln!(out, "memory observers:");
            write_observers(&mut out, &s.observers);
            super::print_out(&out)?;
            out.clear();
            if args.probe {
                write_probes(&mut out, s, args, machine.ram_bytes)?;
            }
        }
        None => {
            let _ = writeln!(out, "memory observers (without a GPU):");
            write_observers(
                &mut out,
                &Observers::for_this_machine(GpuContext::default()),
            );
        }
    }
    super::print_out(&out)?;
    Ok(code)
}

/// The host, its platform and the GPU, one line each.
fn write_machine(out: &mut String, machine: &Machine) {
    let _ = writeln!(out, "host:      {}", machine.host_name);
    let _ = writeln!(
        out,
        "platform:  {} ({})",
        machine.platform,
        machine.platform_evidence.join("; ")
    );
    let _ = writeln!(out, "os:        {}", machine.os);
    let _ = writeln!(out, "kernel:    {}", machine.kernel);
    let _ = writeln!(
        out,
        "cpu:       {} ({} threads)",
        machine.cpu, machine.cpu_threads
    );
    let _ = writeln!(out, "ram:       {}", format_size(machine.ram_bytes));
    if let Some(g) = &machine.gpu {
        let _ = writeln!(
            out,
            "gpu:       {} [{}] cc {} {}",
            g.name,
            g.uuid,
            g.compute_capability,
            format_size(g.total_memory_bytes)
        );
        let _ = writeln!(
            out,
            "driver:    {} (CUDA {}), model {}",
            g.driver_version, g.cuda_driver_version, g.driver_model
        );
        let _ = writeln!(
            out,
            "pci:       {} link {}",
            g.pci_bus_id,
            machine.key().pcie_link
        );
        let _ = writeln!(
            out,
            "maps host memory: {}, integrated: {}, copy engines: {}, SMs: {}",
            g.can_map_host_memory, g.integrated, g.async_engines, g.multiprocessors
        );
    }
}

/// What each memory observer reads, indented under its heading.
fn write_observers(out: &mut String, observers: &Observers) {
    for line in probe::describe(observers).lines() {
        let _ = writeln!(out, "  {line}");
    }
}

/// `--probe`: max allocatable device memory and the pinned ceiling, alone and with 90% of free
/// device memory held.
fn write_probes(
    out: &mut String,
    s: &Runner,
    args: &InfoArgs,
    ram_bytes: u64,
) -> Result<(), Error> {
    let _ = match max_allocatable(&s.gpu) {
        Ok(v) => writeln!(out, "max allocatable device memory: {}", format_size(v)),
        Err(e) => writeln!(out, "max allocatable device memory: probe failed: {e}"),
    };
    let cap = ceiling_cap(args.pinned_cap.as_deref(), ram_bytes)?;
    let c = pinned_ceiling(256 * MIB, cap, &s.ledger);
    let _ = match c.error {
        Some(e) => writeln!(
            out,
            "pinned ceiling: {} in 256 MiB chunks, then {e} ({:.1} s)",
            format_size(c.bytes),
            c.seconds
        ),
        None => writeln!(
            out,
            "pinned ceiling: at least {} (reached the cap; raise it with --pinned-cap) ({:.1} s)",
            format_size(c.bytes),
            c.seconds
        ),
    };
    let _ = writeln!(
        out,
        "pinned ceiling, 90% of free device memory held: {}",
        crate::run::ceiling_with_device_held(&s.gpu, cap, &s.ledger)
    );
    Ok(())
}

/// The pin budget: the safe bytes and the rule, then each limit with its source or why it is
/// unavailable.
pub(super) fn write_budget(out: &mut String, b: &probe::PinBudget) {
    let _ = match (b.host_alloc_bytes, &b.unavailable) {
        (Some(bytes), _) => writeln!(
            out,
            "pin budget ({}): {} page-locked now (cuMemHostAlloc or cuMemHostRegister)",
            b.predictor.name(),
            format_size(bytes)
        ),
        (None, why) => writeln!(
            out,
            "pin budget: none — {}",
            why.as_deref().unwrap_or("no reading")
        ),
    };
    let _ = writeln!(out, "  rule: {}", b.rule);
    if let Some(n) = b.mappings {
        let _ = writeln!(
            out,
            "  mappings: {n} more (vm.max_map_count less the mappings now, less 10%; registrations inside one allocation did not use them on driver 580)"
        );
    }
    let rows = b.limits.rows();
    for r in rows.iter().filter(|r| !r.other_os) {
        if r.source.is_empty() {
            let _ = writeln!(out, "  {}: {}", r.label, r.value);
        } else {
            let _ = writeln!(out, "  {}: {}  [{}]", r.label, r.value, r.source);
        }
    }
    let elsewhere: Vec<&str> = rows
        .iter()
        .filter(|r| r.other_os)
        .map(|r| r.label)
        .collect();
    if !elsewhere.is_empty() {
        let _ = writeln!(out, "  read on another OS: {}", elsewhere.join("; "));
    }
}

/// The settings that change the answer, one line each: label, value, source. Settings that are
/// unavailable for one reason shared by several ([`GROUPED`] or more: no GPU, another OS) share
/// one line.
fn write_settings(out: &mut String, settings: &crate::platform::Settings) {
    let _ = writeln!(out, "settings that change the answer:");
    let rows = settings.rows();
    let mut shared: Vec<(&str, Vec<&str>)> = Vec::new();
    for row in &rows {
        if let Some(why) = row.unavailable.as_deref() {
            match shared.iter_mut().find(|(w, _)| *w == why) {
                Some((_, labels)) => labels.push(row.label),
                None => shared.push((why, vec![row.label])),
            }
        }
    }
    shared.retain(|(_, labels)| labels.len() >= GROUPED);
    let grouped = |why: Option<&str>| why.is_some_and(|w| shared.iter().any(|(s, _)| *s == w));
    for row in rows.iter().filter(|r| !grouped(r.unavailable.as_deref())) {
        if row.source.is_empty() {
            let _ = writeln!(out, "  {}: {}", row.label, row.value);
        } else {
            let _ = writeln!(out, "  {}: {}  [{}]", row.label, row.value, row.source);
        }
    }
    for (why, labels) in &shared {
        let _ = writeln!(
            out,
            "  {} settings unavailable ({why}): {}",
            labels.len(),
            labels.join("; ")
        );
    }
}

/// How many settings unavailable for the same reason [`write_settings`] puts on one line.
const GROUPED: usize = 3;
