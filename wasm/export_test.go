package wasm

// For the external tests (wasm_test): the page's base85.
var (
	Base85Encode   = base85Encode
	Base85Decode   = base85Decode
	Base85Alphabet = base85Alphabet
)
