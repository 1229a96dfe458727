//! The engine's progress reports (engine/progress.rs) as `notifications/progress`, for a request
//! that carried a `progressToken`: sent in order by one task, and all of them before the answer.
use crate::engine::progress::{Progress, Step};
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Run `work` with a progress sink when the client asked for progress (else with none).
pub async fn reported<T, F: Future<Output = T>>(ctx: &RequestContext<RoleServer>, work: impl FnOnce(Option<Progress>) -> F) -> T {
    let Some(token) = ctx.meta.get_progress_token() else {
        return work(None).await;
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Step>();
    let peer = ctx.peer.clone();
    let forward = tokio::spawn(async move {
        while let Some(s) = rx.recv().await {
            let note = ProgressNotificationParam::new(token.clone(), f64::from(s.done)).with_total(f64::from(s.known)).with_message(s.message);
            let _ = peer.notify_progress(note).await;
        }
    });
    let out = work(Some(Progress(Arc::new(move |s| {
        let _ = tx.send(s);
    }))))
    .await;
    // Every copy of the sink went with the query: the channel closes, the last reports go out first.
    let _ = tokio::time::timeout(Duration::from_secs(2), forward).await;
    out
}
