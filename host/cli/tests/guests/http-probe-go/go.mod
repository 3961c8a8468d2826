module httpprobe

go 1.25

require azd-wasm-host/azdext v0.0.0

replace azd-wasm-host/azdext => ../../../../../guest-sdk/go
