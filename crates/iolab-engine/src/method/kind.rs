//! The name of a method, declared with the spec that holds it (`spec::method_kind`).

pub use crate::spec::method_kind::MethodKind;
