package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// renewBefore: a certificate this close to its end is issued again.
const renewBefore = 30 * 24 * time.Hour

// issued is what the state file remembers of one certificate.
type issued struct {
	Subject  string    `json:"subject,omitempty"`
	Hosts    []string  `json:"hosts,omitempty"`
	SHA256   string    `json:"sha256"`
	NotAfter time.Time `json:"notAfter"`
}

// state is what the last deploy made (the environment's devcerts-state.json).
type state struct {
	Dir          string             `json:"dir"`
	Authority    *issued            `json:"authority,omitempty"`
	Certificates map[string]*issued `json:"certificates"`
}

// change is one step of a plan: what happens to the authority ("ca") or a certificate.
type change struct {
	Kind string // Create, Modify, NoChange or Delete
	Name string
	Why  string
}

func (p *Provider) loadState() (*state, error) {
	st := &state{Certificates: map[string]*issued{}}
	data, err := os.ReadFile(p.statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, invalidState(p.statePath, err)
	}
	if st.Certificates == nil {
		st.Certificates = map[string]*issued{}
	}
	return st, nil
}

func (p *Provider) saveState(st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.statePath), 0o755); err != nil {
		return err
	}
	return writeFile(p.statePath, append(data, '\n'), 0o644)
}

// files of a certificate (name "ca" is the authority) under dir.
func (p *Provider) files(dir, name string) (cert, key string) {
	base := filepath.Join(p.project, dir, name)
	return base + ".pem", base + "-key.pem"
}

// plan compares the configuration with the state and the disk; it changes nothing.
func (p *Provider) plan(st *state, now time.Time) []change {
	var changes []change
	moved := st.Dir != "" && st.Dir != p.cfg.Dir
	ca := p.authorityChange(st, now, moved)
	changes = append(changes, ca)
	for _, c := range p.cfg.Certificates {
		changes = append(changes, p.leafChange(st, c, now, moved, ca.Kind != "NoChange"))
	}
	var gone []string
	for name := range st.Certificates {
		if moved || !slices.ContainsFunc(p.cfg.Certificates, func(c certConfig) bool { return c.Name == name }) {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		changes = append(changes, change{"Delete", name, "no longer declared"})
	}
	return changes
}

func (p *Provider) authorityChange(st *state, now time.Time, moved bool) change {
	switch {
	case st.Authority == nil:
		return change{"Create", "ca", "new authority " + p.cfg.Authority}
	case moved:
		return change{"Create", "ca", "moved to " + p.cfg.Dir}
	}
	on, err := loadPair(p.files(p.cfg.Dir, "ca"))
	switch {
	case err != nil:
		return change{"Create", "ca", "its files are gone"}
	case fingerprint(on.cert) != st.Authority.SHA256:
		return change{"Modify", "ca", "changed on disk"}
	case st.Authority.Subject != p.cfg.Authority:
		return change{"Modify", "ca", "renamed to " + p.cfg.Authority}
	case on.cert.NotAfter.Sub(now) < renewBefore:
		return change{"Modify", "ca", "expires " + on.cert.NotAfter.Format(time.DateOnly)}
	}
	return change{"NoChange", "ca", ""}
}

func (p *Provider) leafChange(st *state, c certConfig, now time.Time, moved, newAuthority bool) change {
	was, known := st.Certificates[c.Name]
	if !known || moved {
		return change{"Create", c.Name, "new certificate"}
	}
	on, err := loadPair(p.files(p.cfg.Dir, c.Name))
	switch {
	case err != nil:
		return change{"Create", c.Name, "its files are gone"}
	case newAuthority:
		return change{"Modify", c.Name, "signed by the new authority"}
	case fingerprint(on.cert) != was.SHA256:
		return change{"Modify", c.Name, "changed on disk"}
	case !slices.Equal(was.Hosts, c.Hosts):
		return change{"Modify", c.Name, "hosts changed"}
	case on.cert.NotAfter.Sub(now) < renewBefore:
		return change{"Modify", c.Name, "expires " + on.cert.NotAfter.Format(time.DateOnly)}
	}
	return change{"NoChange", c.Name, ""}
}
