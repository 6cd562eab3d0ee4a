// Package rules holds m1nd's pure rules: the refusal envelope every command
// and API speaks, and the checks that refuse: human origins, the o5
// sanitizer for names an LLM proposes, the receipt's evidence contract and
// execution window. It imports nothing but the standard library.
package rules
