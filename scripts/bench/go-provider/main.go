// Command azd-go-bench-provider is the benchmark's anchor: an azd extension written on azd's
// own Go SDK (pkg/azdext, azd 1.31.2), serving the same trivial provisioning provider as
// scripts/bench/c-provider does as a WebAssembly component:
//
//   - State answers two fixed outputs;
//   - Deploy reports `progress` messages (infra.config, a decimal string, default 100000);
//   - everything else answers at once.
//
// scripts/bench.sh builds it and host/cli/benches/vs_go.rs drives it next to azd-wasm-host.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/azure/azure-dev/cli/azd/pkg/azdext"
	"github.com/azure/azure-dev/cli/azd/pkg/grpcbroker"
	"google.golang.org/protobuf/types/known/structpb"
)

const providerName = "bench"

type trivial struct {
	progress int
}

func (p *trivial) Initialize(_ context.Context, _ string, options *azdext.ProvisioningOptions) error {
	p.progress = 100000
	v, ok := options.GetConfig().GetFields()["progress"]
	if !ok {
		return nil
	}
	// A decimal string, as the C twin reads it (a number is accepted too).
	if _, isString := v.GetKind().(*structpb.Value_StringValue); isString {
		n, err := strconv.Atoi(v.GetStringValue())
		if err != nil || n < 0 {
			return fmt.Errorf("the bench config's `progress` is not a count: %q", v.GetStringValue())
		}
		p.progress = n
		return nil
	}
	p.progress = int(v.GetNumberValue())
	return nil
}

func fixedOutputs() map[string]*azdext.ProvisioningOutputParameter {
	return map[string]*azdext.ProvisioningOutputParameter{
		"GREETING": {Type: "string", Value: "hello"},
		"COUNT":    {Type: "number", Value: "3"},
	}
}

func (p *trivial) State(context.Context, *azdext.ProvisioningStateOptions) (*azdext.ProvisioningStateResult, error) {
	return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{Outputs: fixedOutputs()}}, nil
}

func (p *trivial) Deploy(_ context.Context, progress grpcbroker.ProgressFunc) (*azdext.ProvisioningDeployResult, error) {
	for i := 0; i < p.progress; i++ {
		progress(strconv.Itoa(i))
	}
	return &azdext.ProvisioningDeployResult{Deployment: &azdext.ProvisioningDeployment{Outputs: fixedOutputs()}}, nil
}

func (p *trivial) Preview(context.Context, grpcbroker.ProgressFunc) (*azdext.ProvisioningPreviewResult, error) {
	return &azdext.ProvisioningPreviewResult{Preview: &azdext.ProvisioningDeploymentPreview{}}, nil
}

func (p *trivial) Destroy(
	context.Context, *azdext.ProvisioningDestroyOptions, grpcbroker.ProgressFunc,
) (*azdext.ProvisioningDestroyResult, error) {
	return &azdext.ProvisioningDestroyResult{}, nil
}

func (p *trivial) EnsureEnv(context.Context) error { return nil }

func (p *trivial) Parameters(context.Context) ([]*azdext.ProvisioningParameter, error) {
	return nil, nil
}

func (p *trivial) PlannedOutputs(context.Context) ([]*azdext.ProvisioningPlannedOutput, error) {
	return nil, nil
}

func main() {
	if len(os.Args) != 2 || os.Args[1] != "listen" {
		fmt.Fprintln(os.Stderr, "usage: azd-go-bench-provider listen (started by azd, or by the benchmark)")
		os.Exit(2)
	}
	ctx := azdext.WithAccessToken(context.Background())
	client, err := azdext.NewAzdClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, "azd client:", err)
		os.Exit(1)
	}
	defer client.Close()
	host := azdext.NewExtensionHost(client).
		WithProvisioningProvider(providerName, func() azdext.ProvisioningProvider { return &trivial{} })
	if err := host.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "extension host:", err)
		os.Exit(1)
	}
}
