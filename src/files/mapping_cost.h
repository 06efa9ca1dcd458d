// Whether reading a cached file through a mapping costs this machine less than copying it out
// of the page cache, measured once per process.
//
// The first touch of each 4 KiB page of a new mapping is a page fault whose cost depends on the
// machine: ~0.1 us where the hardware walks the guest's page tables (bare metal, KVM with EPT or
// NPT: an Intel Xeon guest mapped a cached 1 GiB checkpoint for 0.02-0.05 s of system time
// against 0.21-0.37 s copying it into fresh buffers), ~1.7 us where the hypervisor builds them
// (shadow paging: the AMD EPYC guest of docs/performance.md, "Sources read, not mapped"), where
// the copy into reused buffers is the cheaper way.
#pragma once

namespace iotx::files {

// True when touching every page of a mapped 1 MiB memory file took less time than pread()
// copying it into memory already touched (~1 ms, the first call of a process; later calls
// return the same answer). False when the probe cannot run.
bool MappingCheaperThanCopy() noexcept;

}  // namespace iotx::files
