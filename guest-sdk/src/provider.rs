//! The [`Provider`] trait an author implements, the adapter that wires it to the component's
//! exports, and the [`export!`](crate::export) macro that does.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

use crate::Error;
use crate::bindings::azd::provisioning0_1_0::types::{
    DeployResult, DeploymentPreview, DestroyOptions, DestroyResult, Error as WitError, Parameter,
    PlannedOutput, ProvisioningOptions, ProvisioningState, StateOptions,
};
use crate::bindings::exports::azd::provisioning0_1_0::provider::Guest;

/// An azd provisioning provider.
///
/// The host makes a fresh component instance for each provisioning layer and calls
/// [`initialize`](Provider::initialize) first; the value it returns receives every later call
/// for that layer. Calls never overlap. Return an [`Error`] for anything expected to fail; a
/// panic traps the instance and azd shows a generic failure.
pub trait Provider: Sized + 'static {
    /// Sets the provider up for one layer. `project_path` is the absolute path of the azd
    /// project; `options.config::<T>()` parses the provider's `config:` from `azure.yaml`.
    fn initialize(project_path: String, options: ProvisioningOptions) -> Result<Self, Error>;

    /// What is deployed now (`azd env refresh`, `azd provision --output json`).
    fn state(&mut self, options: StateOptions) -> Result<ProvisioningState, Error>;

    /// Provisions the layer (`azd provision`). May report [`progress`](crate::progress).
    fn deploy(&mut self) -> Result<DeployResult, Error>;

    /// What `deploy` would do (`azd provision --preview`). May report progress.
    /// By default: a `compatibility` error saying preview is not supported.
    fn preview(&mut self) -> Result<DeploymentPreview, Error> {
        Err(Error::compatibility(
            "preview_not_supported",
            "this provider cannot preview a deployment",
        )
        .with_suggestion("run `azd provision` without `--preview`"))
    }

    /// Removes what the layer provisioned (`azd down`). May report progress.
    fn destroy(&mut self, options: DestroyOptions) -> Result<DestroyResult, Error>;

    /// Makes sure the azd environment has what the provider needs. By default: nothing to do.
    fn ensure_env(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// The inputs the provider takes (`azd pipeline config`). By default: none.
    fn parameters(&mut self) -> Result<Vec<Parameter>, Error> {
        Ok(Vec::new())
    }

    /// The outputs `deploy` will produce. By default: none announced.
    fn planned_outputs(&mut self) -> Result<Vec<PlannedOutput>, Error> {
        Ok(Vec::new())
    }
}

thread_local! {
    /// The provider value `initialize` made for this instance. A component instance runs one
    /// call at a time on one thread, so a thread-local cell is all the state it needs; natively
    /// each test thread gets its own.
    static INSTANCE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Implements the generated export trait for any [`Provider`]. Used by [`export!`](crate::export).
#[doc(hidden)]
pub struct Adapter<P>(PhantomData<fn() -> P>);

fn busy() -> Error {
    Error::internal(
        "reentrant_call",
        "the provider was called while another call was still running",
    )
}

fn with_provider<P: Provider, T>(
    call: impl FnOnce(&mut P) -> Result<T, Error>,
) -> Result<T, Error> {
    INSTANCE.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| busy())?;
        let provider = slot
            .as_mut()
            .and_then(|provider| provider.downcast_mut::<P>())
            .ok_or_else(|| {
                Error::internal(
                    "not_initialized",
                    "the provider was called before `initialize` succeeded",
                )
            })?;
        call(provider)
    })
}

fn store(instance: Option<Box<dyn Any>>) -> Result<(), Error> {
    INSTANCE.with(|cell| {
        cell.try_borrow_mut()
            .map(|mut slot| *slot = instance)
            .map_err(|_| busy())
    })
}

fn initialize<P: Provider>(
    project_path: String,
    options: ProvisioningOptions,
) -> Result<(), Error> {
    // Forget any earlier layer first, so a failed initialize leaves nothing callable.
    store(None)?;
    let provider = P::initialize(project_path, options)?;
    store(Some(Box::new(provider)))
}

impl<P: Provider> Guest for Adapter<P> {
    fn initialize(project_path: String, options: ProvisioningOptions) -> Result<(), WitError> {
        initialize::<P>(project_path, options).map_err(Error::into_wit)
    }

    fn state(options: StateOptions) -> Result<ProvisioningState, WitError> {
        with_provider(|provider: &mut P| provider.state(options)).map_err(Error::into_wit)
    }

    fn deploy() -> Result<DeployResult, WitError> {
        with_provider(P::deploy).map_err(Error::into_wit)
    }

    fn preview() -> Result<DeploymentPreview, WitError> {
        with_provider(P::preview).map_err(Error::into_wit)
    }

    fn destroy(options: DestroyOptions) -> Result<DestroyResult, WitError> {
        with_provider(|provider: &mut P| provider.destroy(options)).map_err(Error::into_wit)
    }

    fn ensure_env() -> Result<(), WitError> {
        with_provider(P::ensure_env).map_err(Error::into_wit)
    }

    fn parameters() -> Result<Vec<Parameter>, WitError> {
        with_provider(P::parameters).map_err(Error::into_wit)
    }

    fn planned_outputs() -> Result<Vec<PlannedOutput>, WitError> {
        with_provider(P::planned_outputs).map_err(Error::into_wit)
    }
}

/// Exports a [`Provider`] implementation as the component's `provider` interface.
///
/// Call it once, at the top level of the provider crate: `azd_provider_sdk::export!(MyProvider);`
///
/// The export glue exists only when compiling for WebAssembly: its symbol names
/// (`azd:provisioning/provider@0.1.0#deploy`, ...) are not valid in a native shared library's
/// symbol list. Natively the macro only checks that the type implements [`Provider`], so
/// `cargo check`, `cargo test` and `cargo build` work on the host machine.
#[macro_export]
macro_rules! export {
    ($provider:ty) => {
        #[cfg(target_arch = "wasm32")]
        $crate::export!(@glue $provider);
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            const fn assert_provider<P: $crate::Provider>() {}
            assert_provider::<$provider>();
        };
    };
    // The export glue itself. The SDK's own tests expand it natively (in a test executable,
    // where the symbol names are harmless) so that it is type-checked without a wasm target.
    (@glue $provider:ty) => {
        #[allow(unsafe_code, reason = "canonical ABI glue generated by wit-bindgen")]
        const _: () = {
            type __AzdProviderExport = $crate::__private::Adapter<$provider>;
            $crate::__private::export_world!(
                __AzdProviderExport with_types_in $crate::bindings
            );
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Output};

    /// Counts deploys so tests can see that state lives across calls.
    struct Counter {
        layer: String,
        deploys: u32,
    }

    impl Provider for Counter {
        fn initialize(_project_path: String, options: ProvisioningOptions) -> Result<Self, Error> {
            if options.name == "broken" {
                return Err(Error::validation("broken_layer", "layer refused"));
            }
            Ok(Self {
                layer: options.name,
                deploys: 0,
            })
        }

        fn state(&mut self, _options: StateOptions) -> Result<ProvisioningState, Error> {
            Ok(ProvisioningState::new(
                [
                    ("DEPLOYS", Output::number(self.deploys)),
                    ("LAYER", Output::string(&self.layer)),
                ],
                [],
            ))
        }

        fn deploy(&mut self) -> Result<DeployResult, Error> {
            self.deploys += 1;
            Ok(DeployResult::deployed(Deployment::with_outputs([(
                "DEPLOYS",
                Output::number(self.deploys),
            )])))
        }

        fn destroy(&mut self, options: DestroyOptions) -> Result<DestroyResult, Error> {
            Ok(DestroyResult::new(if options.purge {
                vec!["DEPLOYS"]
            } else {
                vec![]
            }))
        }
    }

    type Exported = Adapter<Counter>;

    // Compile the wasm export glue for `Counter` (never called here: its imports and ABI only
    // make sense inside a component). This keeps the glue type-checked without a wasm target.
    crate::export!(@glue Counter);

    fn options(layer: &str) -> ProvisioningOptions {
        ProvisioningOptions {
            provider: "counter".into(),
            path: String::new(),
            module: String::new(),
            deployment_stacks: Vec::new(),
            ignore_deployment_state: false,
            config: "{}".into(),
            name: layer.into(),
            virtual_env: Vec::new(),
        }
    }

    /// The SDK view of an error the export glue hands to the host.
    fn sdk<T: std::fmt::Debug>(result: Result<T, WitError>) -> Error {
        Error::from(result.unwrap_err())
    }

    fn deploys_output(result: &DeployResult) -> &str {
        &result.deployment.outputs[0].1.value
    }

    #[test]
    fn calls_before_initialize_are_errors_not_panics() {
        let error = sdk(Exported::deploy());
        assert_eq!(error.code(), Some("not_initialized"));
        let error = sdk(Exported::state(StateOptions {
            hint: String::new(),
        }));
        assert_eq!(error.code(), Some("not_initialized"));
    }

    #[test]
    fn state_lives_across_calls_and_initialize_starts_afresh() {
        Exported::initialize("/p".into(), options("one")).unwrap();
        assert_eq!(deploys_output(&Exported::deploy().unwrap()), "1");
        assert_eq!(deploys_output(&Exported::deploy().unwrap()), "2");
        let state = Exported::state(StateOptions {
            hint: String::new(),
        })
        .unwrap();
        assert_eq!(state.outputs[1].1.value, "one");

        Exported::initialize("/p".into(), options("two")).unwrap();
        assert_eq!(deploys_output(&Exported::deploy().unwrap()), "1");
    }

    #[test]
    fn failed_initialize_returns_its_error_and_leaves_nothing_callable() {
        Exported::initialize("/p".into(), options("one")).unwrap();
        let error = sdk(Exported::initialize("/p".into(), options("broken")));
        assert_eq!(error.code(), Some("broken_layer"));
        assert_eq!(sdk(Exported::deploy()).code(), Some("not_initialized"));
    }

    #[test]
    fn arguments_reach_the_provider() {
        Exported::initialize("/p".into(), options("one")).unwrap();
        let purge = DestroyOptions {
            force: true,
            purge: true,
        };
        assert_eq!(
            Exported::destroy(purge).unwrap().invalidated_env_keys,
            vec!["DEPLOYS".to_owned()]
        );
    }

    #[test]
    fn default_methods_answer_sensibly() {
        Exported::initialize("/p".into(), options("one")).unwrap();
        let error = sdk(Exported::preview());
        assert_eq!(error.code(), Some("preview_not_supported"));
        assert!(!error.suggestion().is_empty());
        assert_eq!(Exported::ensure_env(), Ok(()));
        assert_eq!(Exported::parameters(), Ok(Vec::new()));
        assert_eq!(Exported::planned_outputs(), Ok(Vec::new()));
    }
}
