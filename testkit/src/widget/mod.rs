//! The framework's own test kind: `Widget`, its fake cloud and an environment that puts them
//! in a sandbox. For tests and benchmarks of `ferroplane-runtime` itself, which must not depend
//! on a real provider.

mod cloud;
mod env;
mod kind;

pub use cloud::{CloudState, FakeClient, FakeCloud, FakeConnector, Fault, Hook, Res};
pub use env::{WidgetEnv, fast_policy};
pub use kind::{NS, Widget, WidgetObservation, WidgetParameters, WidgetSpec, WidgetStatus, widget};
