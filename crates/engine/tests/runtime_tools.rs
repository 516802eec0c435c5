//! Tools loaded and unloaded while a session runs (external tools come and go with their
//! folders): the registry, what a model is offered and the change notification agree.

use std::sync::Arc;

use async_trait::async_trait;
use resolve_engine::*;
use serde_json::{json, Value};

struct Named(&'static str);

#[async_trait]
impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn label(&self) -> &str {
        "Named"
    }
    fn description(&self) -> &str {
        "answers its name"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self.0))
    }
}

#[tokio::test]
async fn a_tool_loaded_then_unloaded_at_runtime_is_offered_then_unknown_and_each_change_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::open(dir.path(), ResolvePolicy::Agent).unwrap();
    let mut changes = session.subscribe_tools();
    assert!(!changes.has_changed().unwrap());

    session.load(|_api| vec![Arc::new(Named("late")) as Arc<dyn Tool>]).unwrap();
    assert!(changes.has_changed().unwrap(), "a load is announced");
    changes.borrow_and_update();
    assert!(session.offered_tools().iter().any(|t| t.name == "late"));
    assert_eq!(session.call(Actor::Agent, "late", json!({})).await.text_content(), "late");

    assert!(session.unload("late"));
    assert!(changes.has_changed().unwrap(), "an unload is announced");
    changes.borrow_and_update();
    assert!(!session.offered_tools().iter().any(|t| t.name == "late"));
    let gone = session.call(Actor::Agent, "late", json!({})).await;
    assert!(gone.is_error);
    assert_eq!(gone.error_code.as_deref(), Some("unknown_tool"));

    assert!(!session.unload("late"), "nothing left to unload");
    assert!(!session.unload(RESOLVE_TOOL_NAME), "resolve cannot be unloaded");
    assert!(!changes.has_changed().unwrap(), "refused unloads announce nothing");
    // The name is free again.
    session.load(|_api| vec![Arc::new(Named("late")) as Arc<dyn Tool>]).unwrap();
    assert_eq!(session.call(Actor::Agent, "late", json!({})).await.text_content(), "late");
}
