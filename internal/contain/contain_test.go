package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The test binary stands in for m1nd: started with the contain verb, it
// contains itself and execs the command, as runnerd's binary does.
func TestMain(m *testing.M) {
	if code, handled := Main(os.Args); handled {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		name, in string
		want     Policy
		err      string
	}{
		{"grants", `{"read":["/usr"],"write":["/tmp/wt"],"devices":["/dev"]}`, Policy{Read: []string{"/usr"}, Write: []string{"/tmp/wt"}, Devices: []string{"/dev"}}, ""},
		{"empty", `{}`, Policy{}, ""},
		{"relative", `{"read":["usr"]}`, Policy{}, `grants "usr"`},
		{"dot dot", `{"write":["/tmp/wt/../../etc"]}`, Policy{}, "absolute, clean"},
		{"trailing slash", `{"write":["/tmp/wt/"]}`, Policy{}, "absolute, clean"},
		{"unknown field", `{"read":[],"net":["*"]}`, Policy{}, "does not read"},
		{"two documents", `{} {}`, Policy{}, "data after it"},
		{"not json", `read=/`, Policy{}, "does not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePolicy([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParsePolicy(%s) = %v, want an error with %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParsePolicy(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		dir, path string
		want      bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a/", "/a/b", true},
		{"/a", "/ab", false},
		{"/a/b", "/a", false},
		{"/", "/x", true},
		{"/a/../b", "/b/c", true},
	}
	for _, tt := range tests {
		if got := Covers(tt.dir, tt.path); got != tt.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tt.dir, tt.path, got, tt.want)
		}
	}
}

func TestCommandCarriesThePolicyOnce(t *testing.T) {
	p := Policy{Read: []string{"/usr"}, Write: []string{"/w"}}
	argv, env, err := Command("/bin/m1nd", p, []string{"sh", "-c", "true"}, []string{"A=1", PolicyEnv + "={}"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/bin/m1nd", Verb, "--", "sh", "-c", "true"}; !reflect.DeepEqual(argv, want) {
		t.Fatalf("argv = %q, want %q", argv, want)
	}
	var carried []string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, PolicyEnv+"="); ok {
			carried = append(carried, v)
		}
	}
	if len(carried) != 1 {
		t.Fatalf("env carries the policy %d times: %q", len(carried), env)
	}
	back, err := ParsePolicy([]byte(carried[0]))
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("the carried policy reads back as %+v, %v", back, err)
	}
}

// TestTheKernelHoldsThePolicy runs a shell contained: it writes where it
// was granted, and the kernel refuses a write beside it and a read of a
// folder it was not granted.
func TestTheKernelHoldsThePolicy(t *testing.T) {
	if abi, why := Probe(); why != "" {
		t.Skipf("no containment here (ABI %d): %s", abi, why)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	granted, denied, secret := filepath.Join(root, "granted"), filepath.Join(root, "denied"), filepath.Join(root, "secret")
	for _, d := range []string{granted, denied, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	read := []string{"/usr", "/bin", "/lib", "/lib64", "/etc", filepath.Dir(self), denied}
	p := Policy{Read: read, Write: []string{granted}, Devices: []string{"/dev"}}
	run := func(script string) (string, error) {
		argv, env, err := Command(self, p, []string{sh, "-c", script}, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("echo ok > " + granted + "/f && cat " + granted + "/f"); err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("a write where it was granted: %q, %v", out, err)
	}
	if out, err := run("echo no > " + denied + "/f"); err == nil {
		t.Fatalf("a write to a folder granted only for reading succeeded: %q", out)
	}
	if _, err := os.Stat(filepath.Join(denied, "f")); !os.IsNotExist(err) {
		t.Fatalf("the denied write left a file: %v", err)
	}
	if out, err := run("cat " + secret + "/key"); err == nil {
		t.Fatalf("a read of a folder never granted succeeded: %q", out)
	}
	if out, err := run("env"); err != nil || strings.Contains(out, PolicyEnv) {
		t.Fatalf("the command sees the policy: %q, %v", out, err)
	}
}

// TestExecRefusesABadPolicy: the verb never runs a command it could not
// contain as the policy says.
func TestExecRefusesABadPolicy(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"", `{"write":["relative"]}`} {
		cmd := exec.Command(self, Verb, "--", "sh", "-c", "echo EXECUTED")
		cmd.Env = os.Environ()
		if policy != "" {
			cmd.Env = append(cmd.Env, PolicyEnv+"="+policy)
		}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 || strings.Contains(string(out), "EXECUTED") {
			t.Fatalf("policy %q: %q, %v; want a refusal with status 126", policy, out, err)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"read":["/usr"],"write":["/tmp/wt"],"devices":["/dev"]}`))
	f.Add([]byte(`{"read":["a/../b"]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		for _, set := range [][]string{p.Read, p.Write, p.Devices} {
			for _, path := range set {
				if !filepath.IsAbs(path) || filepath.Clean(path) != path {
					t.Fatalf("ParsePolicy accepted the grant %q", path)
				}
			}
		}
	})
}
