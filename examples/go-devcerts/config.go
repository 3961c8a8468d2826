package main

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"strings"

	"azd-wasm-host/azdext"
)

// config is the provider's `infra.config` in azure.yaml.
type config struct {
	// Dir is where the files go, relative to the project (default "certs").
	Dir string `json:"dir"`
	// Authority is the certificate authority's common name.
	Authority string `json:"authority"`
	// ValidDays is how long a certificate is valid (default 90, at most 397).
	ValidDays int `json:"validDays"`
	// Certificates are the certificates to issue.
	Certificates []certConfig `json:"certificates"`
}

type certConfig struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
}

var (
	nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	hostRule = regexp.MustCompile(`^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

func invalidConfig(format string, args ...any) error {
	return &azdext.LocalError{
		Message:    fmt.Sprintf(format, args...),
		Code:       "invalid_config",
		Category:   azdext.LocalErrorCategoryValidation,
		Suggestion: "Check the `infra.config` section of azure.yaml (see examples/go-devcerts/README.md).",
	}
}

// check fills the defaults and refuses what the provider cannot do, before
// anything is touched.
func (c *config) check() error {
	if c.Dir == "" {
		c.Dir = "certs"
	}
	c.Dir = path.Clean(strings.ReplaceAll(c.Dir, `\`, "/"))
	if path.IsAbs(c.Dir) || c.Dir == "." || c.Dir == ".." || strings.HasPrefix(c.Dir, "../") {
		return invalidConfig("`dir` must be a folder inside the project, not %q", c.Dir)
	}
	if c.Authority == "" {
		c.Authority = "devcerts development CA"
	}
	if c.ValidDays == 0 {
		c.ValidDays = 90
	}
	if c.ValidDays < 1 || c.ValidDays > 397 {
		return invalidConfig("`validDays` must be between 1 and 397 (browsers refuse longer), not %d", c.ValidDays)
	}
	if len(c.Certificates) == 0 {
		return invalidConfig("`certificates` lists no certificate to issue")
	}
	seen := map[string]bool{}
	for _, cert := range c.Certificates {
		if !nameRule.MatchString(cert.Name) || cert.Name == "ca" {
			return invalidConfig("certificate name %q must be lower-case letters, digits and dashes (and not \"ca\")", cert.Name)
		}
		if seen[cert.Name] {
			return invalidConfig("certificate %q is listed twice", cert.Name)
		}
		seen[cert.Name] = true
		if len(cert.Hosts) == 0 {
			return invalidConfig("certificate %q names no host", cert.Name)
		}
		for _, h := range cert.Hosts {
			if net.ParseIP(h) == nil && !hostRule.MatchString(h) {
				return invalidConfig("certificate %q: %q is neither a host name nor an IP address", cert.Name, h)
			}
		}
	}
	return nil
}
