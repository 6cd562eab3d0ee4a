package clitest

import (
	"reflect"
	"testing"
)

func TestPlainKeepsOnlyTheFlags(t *testing.T) {
	type streams struct{ n int }
	type options struct {
		IO    *streams
		JSON  bool
		Agent func() (string, error)
		Names []string
	}
	got := Plain(&options{IO: &streams{1}, JSON: true, Agent: func() (string, error) { return "a", nil }, Names: []string{"x"}})
	if want := (options{JSON: true, Names: []string{"x"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("Plain = %+v, want %+v", got, want)
	}
}
