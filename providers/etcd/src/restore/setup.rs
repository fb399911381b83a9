//! What the EtcdCluster controller restores `spec.restore` with ([`RestoreSetup`]): set up once
//! by whoever runs the controller.

use std::sync::Arc;

use super::sources::RestoreSources;
use crate::names::default_tools_image;

/// What restores need: the snapshot stores (none: `spec.restore` is refused with a reason) and
/// the image of the Jobs' ferroplane steps.
#[derive(Clone)]
pub struct RestoreSetup {
    pub sources: Option<Arc<dyn RestoreSources>>,
    pub tools_image: Arc<str>,
}

impl Default for RestoreSetup {
    fn default() -> Self {
        Self {
            sources: None,
            tools_image: default_tools_image().into(),
        }
    }
}

impl std::fmt::Debug for RestoreSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestoreSetup")
            .field("sources", &self.sources.is_some())
            .field("tools_image", &self.tools_image)
            .finish()
    }
}
