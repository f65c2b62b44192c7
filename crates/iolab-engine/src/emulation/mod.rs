//! Whether iolab runs emulated, and how: inside a guest under QEMU's TCG (`guest.rs`), or as foreign code
//! under a user-mode emulator such as qemu-user (`user_mode.rs`). Every result records the answer, and a
//! figure from an emulated CPU shows behaviour, not speed.

pub mod guest;
pub mod user_mode;
