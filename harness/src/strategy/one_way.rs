//! What every one-way strategy shares (copy engine, zero-copy kernels, register-per-copy, the
//! staging ring): the two ends ([`OneWay`]), the streams, the setup times, first touch,
//! verification, footprint and freeing, in [`OneWayTransfer`]. A strategy says only how a batch
//! is enqueued and timed ([`Enqueue`]), and what it holds besides the ends.

use super::*;

/// The largest device end touched and checked from the host ([`host_checked`]). On the
/// H200 host, earlier latency cases whose small device ends were touched by a memset or kernel
/// and checked by the verify kernel made the process's later small pageable device→host copies
/// 1–2 µs slower than the driver-API probe's (which of those steps does it is not isolated);
/// touched and checked through synchronous copies, as the probe does, they read like it
/// (2026-12-03, `scripts/latency-order.sh` of commit 7acce45; docs/latency.md).
const HOST_CHECKED: usize = 64 << 10;

/// Whether a device end of `size` bytes is touched and checked through synchronous copies from
/// and to the host, as the driver-API probe does, rather than by a device memset or kernel: every
/// end up to [`HOST_CHECKED`] (latency cases), and any size the kernels cannot cover (not a
/// multiple of 16 bytes).
fn host_checked(size: usize) -> bool {
    size <= HOST_CHECKED || !size.is_multiple_of(16)
}

/// The two ends of a one-way transfer: the host buffer (the source for H2D, the destination for
/// D2H), a device buffer of the same size (`()` until it is allocated), the direction and the
/// pattern's seed.
pub(crate) struct OneWay<D = DeviceBuffer> {
    pub host: HostBuffer,
    pub device: D,
    pub h2d: bool,
    pub seed: u32,
    pub size: usize,
}

impl OneWay<()> {
    /// The ends of `case` around `host` (of `case.size` bytes), before the device buffer exists.
    fn of(case: &Case, host: HostBuffer) -> Self {
        OneWay {
            host,
            device: (),
            h2d: case.direction == Direction::H2d,
            seed: seed_for(case),
            size: case.size as usize,
        }
    }

    /// The same ends with the device buffer allocated now.
    fn with_device(self) -> Result<OneWay, CudaError> {
        Ok(OneWay {
            device: DeviceBuffer::new(self.size)?,
            host: self.host,
            h2d: self.h2d,
            seed: self.seed,
            size: self.size,
        })
    }
}

impl<D> OneWay<D> {
    pub(crate) fn moves(&self) -> Moves {
        Moves::one_way(self.h2d, self.size)
    }

    /// The lane this transfer reports.
    pub(crate) fn lane(&self) -> Lane {
        Lane::one_way(self.h2d)
    }

    /// First touch of the host buffer, or putting it back as first touch left it: the pattern
    /// when it is the source, zeros when it is the destination (untimed; managed memory between
    /// samples).
    pub(crate) fn reset_host(&mut self) {
        touch_host_end(&mut self.host, self.h2d, self.seed);
    }
}

impl OneWay {
    /// First touch of the device buffer: zeros when it is the destination, the pattern when it
    /// is the source.
    fn touch_device(&mut self, gpu: &Gpu, stream: &Stream) -> Result<(), CudaError> {
        match (self.h2d, host_checked(self.size)) {
            (true, true) => self.device.write(0, &vec![0u8; self.size])?,
            (true, false) => self.device.memset(stream, 0)?,
            (false, true) => {
                // Uploaded from the host buffer itself, which is then zeroed again, as the probe does.
                crate::cuda::fill_pattern(self.host.as_mut_slice(), 0, self.seed);
                self.device.write(0, self.host.as_slice())?;
                crate::cuda::fill_zero(self.host.as_mut_slice());
            }
            (false, false) => {
                gpu.kernels
                    .write(stream, &self.device, self.device.len(), self.seed)?;
            }
        }
        stream.synchronize()
    }

    /// Waits for `streams` (the first one last) and checks the destination: the device buffer
    /// after H2D, the host after D2H.
    pub(crate) fn verify(&self, gpu: &Gpu, streams: &[Stream]) -> Result<Verified, CudaError> {
        for s in &streams[1..] {
            s.synchronize()?;
        }
        streams[0].synchronize()?;
        if self.h2d && host_checked(self.size) {
            let mut landed = vec![0u8; self.size];
            self.device.read(0, &mut landed)?;
            let (bad, first) = crate::cuda::check_pattern(&landed, 0, self.seed);
            Ok(Verified::of(Lane::H2d, bad, first))
        } else if self.h2d {
            verify_device(gpu, &streams[0], &self.device, self.seed, Lane::H2d)
        } else {
            Ok(verify_host(&self.host, self.seed, Lane::D2h))
        }
    }

    /// Frees `others` and then the host buffer, folding their times into `setup`.
    pub(crate) fn free(
        self,
        others: impl IntoIterator<Item = HostBuffer>,
        setup: SetupTimes,
    ) -> Result<SetupTimes, CudaError> {
        let OneWay { host, device, .. } = self;
        drop(device);
        free_all(others.into_iter().chain([host]), setup)
    }
}

/// What a batch runs on: the ends, the streams and the GPU's kernels and gate.
pub(crate) struct Rig<'a, 'g> {
    pub io: &'a mut OneWay,
    pub streams: &'a [Stream],
    pub gpu: &'a Gpu<'g>,
}

/// What a one-way strategy adds to the shared parts: how a batch is enqueued and timed, and the
/// buffers it holds besides the ends.
pub(crate) trait Enqueue {
    /// Runs `batch` transfers between the ends on the streams and times them.
    fn sample(&mut self, rig: Rig<'_, '_>, batch: u32) -> Result<SampleTimes, CudaError>;

    /// Fills in what the samples left to be taken after sampling ([`Measurable::complete`]).
    fn complete(
        &mut self,
        _rig: Rig<'_, '_>,
        _samples: &mut [SampleTimes],
    ) -> Result<(), CudaError> {
        Ok(())
    }

    /// Checks the destination (by default: the ends' check after every stream is done).
    fn verify(&mut self, rig: Rig<'_, '_>) -> Result<Verified, CudaError> {
        rig.io.verify(rig.gpu, rig.streams)
    }

    /// First touch of the strategy's own host buffers (before the host end is touched).
    fn touch(&mut self) {}

    /// Allocates the strategy's own device memory, if any (after the device end).
    fn add_device(&mut self) -> Result<(), CudaError> {
        Ok(())
    }

    /// Adds the memory held besides the ends.
    fn footprint(&self, _fp: &mut Footprint) {}

    /// The host buffers held besides the ends, to be freed before the host end.
    fn into_buffers(self) -> Vec<HostBuffer>
    where
        Self: Sized,
    {
        Vec::new()
    }
}

/// A one-way transfer before its device memory exists: the host end, the strategy's part (its
/// host buffers), and what the device side will need.
pub(crate) struct OneWayHost<E> {
    ends: OneWay<()>,
    streams: u32,
    setup: SetupTimes,
    how: E,
}

impl<E: Enqueue + 'static> OneWayHost<E> {
    /// The transfer of `case` around `host` (of `case.size` bytes), to run on `streams` streams,
    /// with `setup` the times spent allocating its host memory so far.
    pub(crate) fn new(
        case: &Case,
        host: HostBuffer,
        streams: u32,
        setup: SetupTimes,
        how: E,
    ) -> Self {
        OneWayHost {
            ends: OneWay::of(case, host),
            streams,
            setup,
            how,
        }
    }
}

impl<E: Enqueue + 'static> HostSide for OneWayHost<E> {
    /// The strategy's buffers, then the host end: the pattern when it is the source, zeros when
    /// it is the destination.
    fn touch(&mut self) {
        self.how.touch();
        self.ends.reset_host();
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        footprint_of(&self.ends.host, &mut fp);
        self.how.footprint(&mut fp);
        fp
    }

    fn add_device(self: Box<Self>, gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        let OneWayHost {
            ends,
            streams,
            setup,
            mut how,
        } = *self;
        let streams = (0..streams.max(1))
            .map(|_| Stream::new())
            .collect::<Result<Vec<_>, _>>()?;
        let mut io = ends.with_device()?;
        how.add_device()?;
        io.touch_device(gpu, &streams[0])?;
        Ok(Box::new(OneWayTransfer {
            io,
            streams,
            setup,
            how,
        }))
    }
}

/// A one-way transfer: the ends, `streams`, the setup times so far, and the strategy's part.
pub(crate) struct OneWayTransfer<E> {
    io: OneWay,
    streams: Vec<Stream>,
    setup: SetupTimes,
    how: E,
}

impl<E: Enqueue> Measurable for OneWayTransfer<E> {
    fn moves(&self) -> Moves {
        self.io.moves()
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let rig = Rig {
            io: &mut self.io,
            streams: &self.streams,
            gpu,
        };
        self.how.sample(rig, batch)
    }

    fn complete(&mut self, gpu: &Gpu, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        let rig = Rig {
            io: &mut self.io,
            streams: &self.streams,
            gpu,
        };
        self.how.complete(rig, samples)
    }
}

impl<E: Enqueue> Transfer for OneWayTransfer<E> {
    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let rig = Rig {
            io: &mut self.io,
            streams: &self.streams,
            gpu,
        };
        self.how.verify(rig)
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        footprint_of(&self.io.host, &mut fp);
        fp.device = self.io.size as u64;
        self.how.footprint(&mut fp);
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let t = *self;
        // The streams go before the buffers they ran on.
        drop(t.streams);
        t.io.free(t.how.into_buffers(), t.setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_sized_and_odd_ends_are_checked_from_the_host() {
        for size in [4, 16, 4096, 64 << 10, (1 << 20) + 4, (64 << 10) + 1] {
            assert!(host_checked(size), "{size} B");
        }
        for size in [(64 << 10) + 16, 1 << 20, 512 << 20] {
            assert!(!host_checked(size), "{size} B");
        }
    }
}
