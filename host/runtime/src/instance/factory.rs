//! [`WasmProviderFactory`]: makes the fresh [`WasmProvider`]s of one loaded
//! component, one per azd `Initialize`.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::{Provider, ProviderError, ProviderFactory};
use tokio::sync::Mutex;

use crate::instance::ahead::Ahead;
use crate::instance::provider::{InstanceState, WasmProvider};
use crate::instance::template::Template;

/// Makes fresh [`WasmProvider`]s for one loaded component.
#[derive(Clone)]
pub(crate) struct WasmProviderFactory {
    template: Arc<Template>,
    /// The instance made ahead of the first Initialize, once [`prepare`](ProviderFactory::prepare) was called.
    ahead: Arc<Ahead>,
}

impl WasmProviderFactory {
    pub(crate) fn new(template: Template) -> Self {
        Self {
            template: Arc::new(template),
            ahead: Arc::default(),
        }
    }

    /// A fresh provider (what [`ProviderFactory::create`] returns), typed.
    pub(crate) fn create_wasm(&self) -> WasmProvider {
        WasmProvider::new(
            self.template.clone(),
            Arc::new(Mutex::new(InstanceState::Empty)),
            self.ahead.clone(),
        )
    }
}

impl std::fmt::Debug for WasmProviderFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProviderFactory")
            .field("name", &self.template.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ProviderFactory for WasmProviderFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(self.create_wasm()))
    }

    /// Makes the instance the first Initialize takes (`ahead.rs`), on the
    /// async runtime this is called on.
    fn prepare(&self) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(self.ahead.clone().make(self.template.clone()))),
            Err(_) => tracing::debug!("no async runtime: no instance is made ahead"),
        }
    }
}
