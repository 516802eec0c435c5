//! TEMPORARY: stand-ins for the engine contract landing on main ("Engine: policy"); removed
//! when it is merged (the inherent methods then take over).
use resolve_engine::{Session, ToolContext};

pub(crate) trait ContextCompat {
    fn with_client(self, name: String) -> Self;
}
impl ContextCompat for ToolContext {
    fn with_client(self, _name: String) -> Self {
        self
    }
}
pub(crate) trait SessionCompat {
    fn close(&self);
}
impl SessionCompat for Session {
    fn close(&self) {}
}
