// Package azdext is the Go SDK for azd provisioning providers that run as
// WebAssembly components inside azd-wasm-host.
//
// Its shape is azd's own Go SDK's (github.com/azure/azure-dev/cli/azd/pkg/azdext):
// the same ProvisioningProvider interface, the same type and field names, and
// LocalError and ServiceError for structured errors. A provider written for
// azd's gRPC extension host moves over by changing its import path and
// registering its factory in an init function instead of calling the
// extension host's Run:
//
//	func init() {
//		azdext.Register(func() azdext.ProvisioningProvider { return &Provider{} })
//	}
//
//	func main() {}
//
// The differences, all following from the sandbox:
//   - ProvisioningOptions.Config is the provider's azure.yaml `config:` section
//     decoded from JSON (map[string]any; DecodeConfig fills a struct), not a
//     protobuf Struct.
//   - There is no gRPC client: azd's environment, prompts and credentials are
//     functions of this package (EnvironmentName, GetEnvValue, Confirm,
//     PromptText, Select, GetAccessToken), and each reaches azd only when the
//     provider's manifest grants it.
//   - Files are the os package's, inside the folders `[policy] fs` grants;
//     HTTP is net/http's once the provider imports the package azdhttp, to
//     the origins `[policy.http]` grants; there are no other sockets.
//
// Built with `azd-wasm-host build` ([build] language = "go"): mainline Go for
// GOOS=wasip1, -buildmode=c-shared, made a component by the host. Outside a
// component (go test on your machine), the provider's methods run as plain Go;
// the functions that reach azd return ErrNotInComponent unless a test has
// installed a TestHost.
package azdext
