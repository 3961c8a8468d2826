package azdext

import "errors"

// LocalErrorCategory classifies a LocalError (azd's categories).
type LocalErrorCategory string

// azd's local error categories.
const (
	LocalErrorCategoryValidation    LocalErrorCategory = "validation"
	LocalErrorCategoryAuth          LocalErrorCategory = "auth"
	LocalErrorCategoryDependency    LocalErrorCategory = "dependency"
	LocalErrorCategoryCompatibility LocalErrorCategory = "compatibility"
	LocalErrorCategoryUser          LocalErrorCategory = "user"
	LocalErrorCategoryInternal      LocalErrorCategory = "internal"
	LocalErrorCategoryLocal         LocalErrorCategory = "local"
)

// ErrorLink is a reference link azd shows beside an error's suggestion.
type ErrorLink struct {
	URL   string
	Title string
}

// LocalError is a failure on this side: configuration, files, validation.
type LocalError struct {
	Message string
	// Code is lower snake_case (e.g. "missing_subscription_id").
	Code       string
	Category   LocalErrorCategory
	Suggestion string
	Links      []ErrorLink
}

func (e *LocalError) Error() string { return e.Message }

// ServiceError is a failure a remote service reported.
type ServiceError struct {
	Message     string
	ErrorCode   string
	StatusCode  int
	ServiceName string
	Suggestion  string
	Links       []ErrorLink
}

func (e *ServiceError) Error() string { return e.Message }

// ErrNotInComponent is what the functions that reach azd return outside a
// component, unless a test installed a TestHost.
var ErrNotInComponent = errors.New("azdext: azd is reachable only from inside the component (install a TestHost in tests)")
