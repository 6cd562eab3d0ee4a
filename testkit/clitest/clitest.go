// Package clitest holds what the command line's tests share across the
// packages that hold verbs (cli, fullcli).
package clitest

import "reflect"

// Plain is a verb's options o without its streams (a field named IO) and
// its dependency funcs, for comparing the parsed flags alone.
func Plain[O any](o *O) O {
	v := *o
	rv := reflect.ValueOf(&v).Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Func || rv.Type().Field(i).Name == "IO" {
			f.SetZero()
		}
	}
	return v
}
