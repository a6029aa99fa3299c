//! `pinscope info`: this machine, its GPU and observers; with `--probe`, max allocatable device
//! memory and the pinned ceiling.

use super::InfoArgs;
use crate::Error;
use crate::platform::Machine;
use crate::probe::{self, GpuContext, Observers};
use crate::run::{Session, ceiling_cap, max_allocatable, open_session, pinned_ceiling};
use crate::units::{MIB, format_size};

/// The one GPU `--device` names, read as `run --device` reads it.
fn one_device(text: &str) -> Result<u32, Error> {
    use crate::platform::DeviceSelection;
    match DeviceSelection::parse(text).map_err(|e| Error::Usage(format!("--device {text}: {e}")))? {
        DeviceSelection::List(one) if one.len() == 1 => Ok(one[0]),
        several => Err(Error::Usage(format!(
            "--device {several}: info describes one GPU at a time: give one CUDA device index such as 0, once per GPU"
        ))),
    }
}

/// `pinscope info`.
pub fn info_command(args: &InfoArgs) -> Result<i32, Error> {
    let device = one_device(&args.device)?;
    let mut machine = crate::platform::this_machine(args.anonymize);
    let mut no_gpu = None;
    let mut session = match open_session(device, args.anonymize) {
        Ok(s) => Some(s),
        Err(Error::NoGpu(why)) => {
            // With --json, stdout holds only the JSON: the reason goes into it (and to stderr).
            if args.wants_json() {
                eprintln!("GPU: none usable — {why}");
            } else {
                println!("GPU: none usable — {why}");
            }
            machine.settings = Some(crate::run::record_settings_without_gpu("no usable GPU"));
            no_gpu = Some(why);
            None
        }
        Err(e) => return Err(e),
    };
    if let Some(s) = &mut session {
        s.read_settings_under_load();
        machine = s.machine.clone();
    }
    let code = if session.is_some() { 0 } else { 3 };
    if args.wants_json() {
        print_json(&machine, session.as_ref(), no_gpu);
        return Ok(code);
    }
    print_machine(&machine);
    if let Some(settings) = &machine.settings {
        print_settings(settings);
    }
    match &session {
        Some(s) => {
            println!("memory observers:");
            print_observers(&s.observers);
            if args.probe {
                print_probes(s, args, machine.ram_bytes)?;
            }
        }
        None => {
            println!("memory observers (without a GPU):");
            print_observers(&Observers::for_this_machine(GpuContext::default()));
        }
    }
    Ok(code)
}

/// `--json`: the machine, why no GPU was usable, and each observer's status.
fn print_json(machine: &Machine, session: Option<&Session>, no_gpu: Option<String>) {
    let observers = match session {
        Some(s) => s.observers.statuses(),
        None => Observers::for_this_machine(GpuContext::default()).statuses(),
    };
    let v = serde_json::json!({
        "machine": machine,
        "gpu_unavailable": no_gpu,
        "observers": observers,
    });
    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}

/// The host, its platform and the GPU, one line each.
fn print_machine(machine: &Machine) {
    println!("host:      {}", machine.host_name);
    println!(
        "platform:  {} ({})",
        machine.platform,
        machine.platform_evidence.join("; ")
    );
    println!("os:        {}", machine.os);
    println!("kernel:    {}", machine.kernel);
    println!(
        "cpu:       {} ({} threads)",
        machine.cpu, machine.cpu_threads
    );
    println!("ram:       {}", format_size(machine.ram_bytes));
    if let Some(g) = &machine.gpu {
        println!(
            "gpu:       {} [{}] cc {} {}",
            g.name,
            g.uuid,
            g.compute_capability,
            format_size(g.total_memory_bytes)
        );
        println!(
            "driver:    {} (CUDA {}), model {}",
            g.driver_version, g.cuda_driver_version, g.driver_model
        );
        println!(
            "pci:       {} link {}",
            g.pci_bus_id,
            machine.key().pcie_link
        );
        println!(
            "maps host memory: {}, integrated: {}, copy engines: {}, SMs: {}",
            g.can_map_host_memory, g.integrated, g.async_engines, g.multiprocessors
        );
    }
}

/// What each memory observer reads, indented under its heading.
fn print_observers(observers: &Observers) {
    for line in probe::describe(observers).lines() {
        println!("  {line}");
    }
}

/// `--probe`: max allocatable device memory and the pinned ceiling, alone and with 90% of free
/// device memory held.
fn print_probes(s: &Session, args: &InfoArgs, ram_bytes: u64) -> Result<(), Error> {
    match max_allocatable(&s.gpu) {
        Ok(v) => println!("max allocatable device memory: {}", format_size(v)),
        Err(e) => println!("max allocatable device memory: probe failed: {e}"),
    }
    let cap = ceiling_cap(args.pinned_cap.as_deref(), ram_bytes)?;
    let c = pinned_ceiling(256 * MIB, cap, &s.ledger);
    match c.error {
        Some(e) => println!(
            "pinned ceiling: {} in 256 MiB chunks, then {e} ({:.1} s)",
            format_size(c.bytes),
            c.seconds
        ),
        None => println!(
            "pinned ceiling: at least {} (reached the cap; raise it with --pinned-cap) ({:.1} s)",
            format_size(c.bytes),
            c.seconds
        ),
    }
    println!(
        "pinned ceiling, 90% of free device memory held: {}",
        crate::run::ceiling_with_device_held(&s.gpu, cap, &s.ledger)
    );
    Ok(())
}

/// The settings that change the answer, one line each: label, value, source.
fn print_settings(settings: &crate::platform::Settings) {
    println!("settings that change the answer:");
    for row in settings.rows() {
        if row.source.is_empty() {
            println!("  {}: {}", row.label, row.value);
        } else {
            println!("  {}: {}  [{}]", row.label, row.value, row.source);
        }
    }
}
