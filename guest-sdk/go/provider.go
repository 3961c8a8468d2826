package azdext

import (
	"context"
	"sync"
)

// ProgressFunc reports one step of a long operation; azd shows the latest
// message beside its spinner.
type ProgressFunc func(message string)

// ProvisioningProvider is what a provider implements: azd's interface, method
// for method.
type ProvisioningProvider interface {
	Initialize(ctx context.Context, projectPath string, options *ProvisioningOptions) error
	State(ctx context.Context, options *ProvisioningStateOptions) (*ProvisioningStateResult, error)
	Deploy(ctx context.Context, progress ProgressFunc) (*ProvisioningDeployResult, error)
	Preview(ctx context.Context, progress ProgressFunc) (*ProvisioningPreviewResult, error)
	Destroy(ctx context.Context, options *ProvisioningDestroyOptions, progress ProgressFunc) (*ProvisioningDestroyResult, error)
	EnsureEnv(ctx context.Context) error
	Parameters(ctx context.Context) ([]*ProvisioningParameter, error)
	PlannedOutputs(ctx context.Context) ([]*ProvisioningPlannedOutput, error)
}

// ProvisioningProviderFactory makes the provider; it is called once, when azd
// initializes the provider.
type ProvisioningProviderFactory func() ProvisioningProvider

var registry struct {
	sync.Mutex
	factory  ProvisioningProviderFactory
	provider ProvisioningProvider
}

// Register names the factory of this component's provider. Call it from an
// init function: a component runs its package initializers, never main.
// A second call replaces the first.
func Register(factory ProvisioningProviderFactory) {
	registry.Lock()
	defer registry.Unlock()
	registry.factory = factory
	registry.provider = nil
}

// instance returns the provider, made by the factory on first use (azd's
// Initialize); nil with an error when nothing was registered.
func instance(create bool) (ProvisioningProvider, error) {
	registry.Lock()
	defer registry.Unlock()
	if registry.provider != nil && !create {
		return registry.provider, nil
	}
	if !create {
		return nil, &LocalError{
			Message:  "the provider was called before Initialize",
			Code:     "not_initialized",
			Category: LocalErrorCategoryInternal,
		}
	}
	if registry.factory == nil {
		return nil, &LocalError{
			Message:    "this component registered no provider",
			Code:       "no_provider",
			Category:   LocalErrorCategoryInternal,
			Suggestion: "Call azdext.Register(factory) from an init function of the provider's main package.",
		}
	}
	provider := registry.factory()
	if provider == nil {
		return nil, &LocalError{
			Message:  "the provider factory returned nil",
			Code:     "no_provider",
			Category: LocalErrorCategoryInternal,
		}
	}
	registry.provider = provider
	return provider, nil
}
