// Package export_azd_provisioning_0_1_0_provider is where the generated
// exports (../wit_exports) call the provider. It only forwards: package azdext
// installs Impl when it is initialized, and converts between these WIT types
// and its own. (Written by hand; the generator writes only stubs here.)
package export_azd_provisioning_0_1_0_provider

import (
	t "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_1_0_types"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

// Exports is the provider interface in WIT's types.
type Exports interface {
	Initialize(projectPath string, options t.ProvisioningOptions) witTypes.Result[witTypes.Unit, t.Error]
	State(options t.StateOptions) witTypes.Result[t.ProvisioningState, t.Error]
	Deploy() witTypes.Result[t.DeployResult, t.Error]
	Preview() witTypes.Result[t.DeploymentPreview, t.Error]
	Destroy(options t.DestroyOptions) witTypes.Result[t.DestroyResult, t.Error]
	EnsureEnv() witTypes.Result[witTypes.Unit, t.Error]
	Parameters() witTypes.Result[[]t.Parameter, t.Error]
	PlannedOutputs() witTypes.Result[[]t.PlannedOutput, t.Error]
}

// Impl answers the exports; package azdext sets it in its init function.
var Impl Exports

func Initialize(projectPath string, options t.ProvisioningOptions) witTypes.Result[witTypes.Unit, t.Error] {
	return Impl.Initialize(projectPath, options)
}

func State(options t.StateOptions) witTypes.Result[t.ProvisioningState, t.Error] {
	return Impl.State(options)
}

func Deploy() witTypes.Result[t.DeployResult, t.Error] { return Impl.Deploy() }

func Preview() witTypes.Result[t.DeploymentPreview, t.Error] { return Impl.Preview() }

func Destroy(options t.DestroyOptions) witTypes.Result[t.DestroyResult, t.Error] {
	return Impl.Destroy(options)
}

func EnsureEnv() witTypes.Result[witTypes.Unit, t.Error] { return Impl.EnsureEnv() }

func Parameters() witTypes.Result[[]t.Parameter, t.Error] { return Impl.Parameters() }

func PlannedOutputs() witTypes.Result[[]t.PlannedOutput, t.Error] { return Impl.PlannedOutputs() }
