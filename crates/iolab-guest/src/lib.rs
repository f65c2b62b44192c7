//! iolab's guests, below the lab that runs suites in them: Debian kernels fetched and booted under QEMU
//! with iolab inside (`vm`), the guest partition whose I/O goes to the host through an io_uring in shared
//! memory (`partition`), and iolab's sink driver carried as source and built against a kernel's headers
//! (`driver`).

pub mod driver;
pub mod partition;
pub mod vm;
