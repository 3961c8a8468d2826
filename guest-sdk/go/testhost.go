package azdext

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
)

// TestHost is a Host for a provider's own tests (go test, outside a
// component): an in-memory environment, scripted answers, and the log kept.
type TestHost struct {
	mu sync.Mutex
	// Name is the environment's name.
	Name string
	// Values is the environment; SetEnvValue writes here.
	Values map[string]string
	// Answers are the prompts' answers, in order: bool for Confirm, string
	// for PromptText, int for Select. A question without one fails.
	Answers []any
	// Tokens maps a scope to its token.
	Tokens map[string]string
	// Logs keeps every log line, as "LEVEL message".
	Logs []string
}

func (h *TestHost) Log(level slog.Level, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Logs = append(h.Logs, level.String()+" "+message)
}

func (h *TestHost) EnvironmentName() (string, error) { return h.Name, nil }

func (h *TestHost) GetEnvValue(key string) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.Values[key]
	return v, ok && v != "", nil
}

func (h *TestHost) GetEnvValues() (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.Values))
	keys := make([]string, 0, len(h.Values))
	for k := range h.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = h.Values[k]
	}
	return out, nil
}

func (h *TestHost) SetEnvValue(key, value string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.Values == nil {
		h.Values = map[string]string{}
	}
	h.Values[key] = value
	return nil
}

func (h *TestHost) Interactive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.Answers) > 0
}

func (h *TestHost) next(question string) (any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.Answers) == 0 {
		return nil, &LocalError{Message: "no answer scripted for: " + question, Code: "no_answer", Category: LocalErrorCategoryUser}
	}
	a := h.Answers[0]
	h.Answers = h.Answers[1:]
	return a, nil
}

func (h *TestHost) Confirm(o ConfirmOptions) (bool, error) {
	a, err := h.next(o.Message)
	if err != nil {
		return false, err
	}
	b, ok := a.(bool)
	if !ok {
		return false, fmt.Errorf("TestHost: the answer to %q is %T, not bool", o.Message, a)
	}
	return b, nil
}

func (h *TestHost) PromptText(o TextOptions) (string, error) {
	a, err := h.next(o.Message)
	if err != nil {
		return "", err
	}
	s, ok := a.(string)
	if !ok {
		return "", fmt.Errorf("TestHost: the answer to %q is %T, not string", o.Message, a)
	}
	return s, nil
}

func (h *TestHost) Select(o SelectOptions) (int, error) {
	a, err := h.next(o.Message)
	if err != nil {
		return 0, err
	}
	i, ok := a.(int)
	if !ok || i < 0 || i >= len(o.Choices) {
		return 0, fmt.Errorf("TestHost: the answer to %q is %v, not an index of its %d choices", o.Message, a, len(o.Choices))
	}
	return i, nil
}

func (h *TestHost) AccessToken(scope string) (AccessToken, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.Tokens[scope]
	if !ok {
		return AccessToken{}, &LocalError{Message: "no token for scope " + scope, Code: "scope_not_granted", Category: LocalErrorCategoryAuth}
	}
	return AccessToken{Token: t}, nil
}
