//! A thread that cannot start, named with the limits behind it (the memory a run needs is checked up
//! front by `resolve/fits.rs`).
use crate::error::Error;
use crate::mem::limit_text;
use crate::units::fmt_size;

/// The error of a thread that could not be started (pthread_create failed: its stack could not be
/// mapped, or a thread limit was reached): exit 1, naming the errno, the limits and what to change.
pub fn thread_failed(what: &str, e: &std::io::Error, remedy: &str) -> Error {
    let errno = e.raw_os_error().unwrap_or(0);
    Error::Runtime(format!(
        "cannot start {what}: pthread_create failed with {} ({}): a thread needs a 2 MiB stack (and a worker \
         {} of histograms), and the threads of a user are capped by ulimit -u and kernel.threads-max; {}: \
         {remedy}",
        iolab_sys::errno_name(errno),
        std::io::Error::from_raw_os_error(errno)
            .to_string()
            .split(" (os error")
            .next()
            .unwrap_or(""),
        fmt_size(2 * crate::measure::hist::FastHist::BYTES as u64),
        limit_text()
    ))
}
