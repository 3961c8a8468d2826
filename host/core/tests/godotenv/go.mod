module azd-wasm-host/godotenv-oracle

go 1.21

// The version azd 1.31.2's go.mod requires.
require github.com/joho/godotenv v1.5.1
