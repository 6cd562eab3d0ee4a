package trayclient

import "testing"

func TestURLNamesLocalhostForTheUsualLoopback(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1": "http://localhost:7420/",
		"::1":       "http://localhost:7420/",
		"":          "http://localhost:7420/",
		"127.0.0.2": "http://127.0.0.2:7420/",
	} {
		if got := URL(host, "7420"); got != want {
			t.Errorf("URL(%q) = %s, want %s", host, got, want)
		}
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0", "example.com:0"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) bound", addr)
		}
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
