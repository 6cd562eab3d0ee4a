package cli

// SetWholeCLI hands this package's tests m1nd-full's verbs (wholeCLI).
func SetWholeCLI(v Verbs) { wholeCLI = v }
