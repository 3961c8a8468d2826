module {{name}}

go 1.25

require azd-wasm-host/azdext v0.0.0

// The SDK ships inside the project (azdext/), at the version of the azd-wasm-host that wrote it.
replace azd-wasm-host/azdext => ./azdext
