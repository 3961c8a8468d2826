//go:build !wasip1

package azdext

var defaultHost Host = outside{}
