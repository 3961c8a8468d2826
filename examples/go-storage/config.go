package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"azd-wasm-host/azdext"
)

// config is the provider's `infra.config` in azure.yaml (the same as js-storage's and
// azure-storage's).
type config struct {
	// Account is the storage account; it must exist.
	Account string `json:"account"`
	// Auth is "token" (azd's sign-in, the default) or "shared-key" (AZURE_STORAGE_KEY).
	Auth string `json:"auth"`
	// Endpoints override the services' URLs (Azurite's, say); Azure's by default.
	Endpoints  map[string]string `json:"endpoints"`
	Containers []string          `json:"containers"`
	Queues     []string          `json:"queues"`
	Tables     []string          `json:"tables"`
}

// kind is one of the three services' resources.
type kind string

const (
	container kind = "container"
	queue     kind = "queue"
	table     kind = "table"
)

// kinds in the order the provider walks them.
var kinds = []kind{container, queue, table}

// service is the key of each kind's endpoint in the config.
var service = map[kind]string{container: "blob", queue: "queue", table: "table"}

// resourceTypes are the types preview shows.
var resourceTypes = map[kind]string{
	container: "Microsoft.Storage/storageAccounts/blobServices/containers",
	queue:     "Microsoft.Storage/storageAccounts/queueServices/queues",
	table:     "Microsoft.Storage/storageAccounts/tableServices/tables",
}

// resource is one declared container, queue or table.
type resource struct {
	kind kind
	name string
}

var (
	accountRule   = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	containerRule = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	tableRule     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)
)

const configHelp = "Check infra.config in azure.yaml (examples/go-storage/README.md)."

func invalidConfig(message, suggestion string) error {
	return &azdext.LocalError{Message: message, Code: "invalid_config", Category: azdext.LocalErrorCategoryValidation, Suggestion: suggestion}
}

// parseConfig reads and checks the config: every unknown key, bad name and bad URL is refused
// before anything is sent.
func parseConfig(options *azdext.ProvisioningOptions) (*config, []resource, map[kind]string, error) {
	text := options.ConfigJSON
	if strings.TrimSpace(text) == "" {
		text = "{}"
	}
	decoder := json.NewDecoder(bytes.NewReader([]byte(text)))
	decoder.DisallowUnknownFields()
	var c config
	if err := decoder.Decode(&c); err != nil {
		return nil, nil, nil, invalidConfig("the storage-go config does not fit: "+err.Error(),
			"Known keys: account, auth, endpoints, containers, queues, tables.")
	}
	if !accountRule.MatchString(c.Account) {
		return nil, nil, nil, &azdext.LocalError{
			Message: fmt.Sprintf("%q is not a storage account name", c.Account), Code: "invalid_account",
			Category: azdext.LocalErrorCategoryValidation, Suggestion: "A storage account name is 3 to 24 lower-case letters and digits.",
		}
	}
	if c.Auth == "" {
		c.Auth = "token"
	}
	if c.Auth != "token" && c.Auth != "shared-key" {
		return nil, nil, nil, invalidConfig(fmt.Sprintf("auth must be token or shared-key, not %q", c.Auth), configHelp)
	}
	endpoints := map[kind]string{}
	for key := range c.Endpoints {
		if key != "blob" && key != "queue" && key != "table" {
			return nil, nil, nil, invalidConfig(fmt.Sprintf("endpoints.%s is not a service (blob, queue or table)", key), configHelp)
		}
	}
	for _, k := range kinds {
		value, ok := c.Endpoints[service[k]]
		if !ok {
			value = fmt.Sprintf("https://%s.%s.core.windows.net", c.Account, service[k])
		}
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, nil, nil, invalidConfig(fmt.Sprintf("endpoints.%s is not an http(s) URL", service[k]), configHelp)
		}
		endpoints[k] = strings.TrimRight(value, "/")
	}
	var declared []resource
	seen := map[resource]bool{}
	for _, list := range []struct {
		kind  kind
		names []string
	}{{container, c.Containers}, {queue, c.Queues}, {table, c.Tables}} {
		for _, name := range list.names {
			if err := checkName(list.kind, name); err != nil {
				return nil, nil, nil, err
			}
			if r := (resource{list.kind, name}); !seen[r] {
				seen[r] = true
				declared = append(declared, r)
			}
		}
	}
	return &c, declared, endpoints, nil
}

func checkName(k kind, name string) error {
	if k == table {
		if !tableRule.MatchString(name) || strings.EqualFold(name, "tables") {
			return invalidConfig(fmt.Sprintf("%q is not a valid table name", name),
				"A table name is 3 to 63 letters and digits, starting with a letter.")
		}
		return nil
	}
	if !containerRule.MatchString(name) || strings.Contains(name, "--") {
		return invalidConfig(fmt.Sprintf("%q is not a valid %s name", name, k),
			fmt.Sprintf("A %s name is 3 to 63 lower-case letters, digits and single dashes, starting and ending with a letter or digit.", k))
	}
	return nil
}

// names are the names of the resources of kind k, in order.
func names(resources []resource, k kind) []string {
	out := []string{}
	for _, r := range resources {
		if r.kind == k {
			out = append(out, r.name)
		}
	}
	return out
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
