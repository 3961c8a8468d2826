module azd-wasm-host/azdext

go 1.25
