package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// tools are the programs the driver runs and the Debian packages that provide them.
var tools = []struct {
	name, pkg string
	optional  bool // nginx is one peer among several; without it the run goes on (h2load: without it the HTTP/2 load figures sit out)
}{
	{"wrk", "wrk", false},
	{"taskset", "util-linux", false},
	{"nginx", "nginx-light", true},
	// The HTTP/2 figures' load generator and one of their peers (h2.go).
	{"h2load", "nghttp2-client", true},
	{"h2o", "h2o", true},
}

// lookTool finds a program on PATH or in the sbin directories, which a non-root PATH may lack.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// ensureTools installs missing tools with apt-get, so a fresh Debian machine needs nothing but
// Go. It returns each tool's path; an optional tool that cannot be had is left out.
func ensureTools(ctx context.Context, p *procs, log func(string, ...any)) (map[string]string, error) {
	var missing []string
	for _, t := range tools {
		if _, err := lookTool(t.name); err != nil {
			missing = append(missing, t.pkg)
		}
	}
	if len(missing) > 0 {
		log("installing %s with apt-get", strings.Join(missing, " "))
		if err := aptInstall(ctx, p, missing); err != nil {
			log("apt-get failed: %v", err)
		}
	}
	paths := map[string]string{}
	for _, t := range tools {
		path, err := lookTool(t.name)
		switch {
		case err == nil:
			paths[t.name] = path
		case t.optional:
			log("%s is missing (apt-get install %s); going on without it", t.name, t.pkg)
		default:
			return nil, fmt.Errorf("%s is missing: apt-get install %s", t.name, t.pkg)
		}
	}
	return paths, nil
}

func aptInstall(ctx context.Context, p *procs, pkgs []string) error {
	var prefix []string
	if os.Geteuid() != 0 {
		sudo, err := exec.LookPath("sudo")
		if err != nil {
			return fmt.Errorf("not root and no sudo")
		}
		prefix = []string{sudo}
	}
	steps := [][]string{
		{"apt-get", "update"},
		append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pkgs...),
	}
	for _, s := range steps {
		argv := append(append([]string{}, prefix...), s...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := p.run(ctx, cmd); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
		}
	}
	return nil
}

// machine fills in what the report says about the machine and the tools.
func machine(m *Meta, toolPaths map[string]string) {
	m.CPUs = runtime.NumCPU()
	m.GoVersion = runtime.Version()
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		m.MemTotal = strings.Join(strings.Fields(strings.TrimPrefix(line, "MemTotal:")), " ")
	}
	if m.Versions == nil {
		m.Versions = map[string]string{}
	}
	if p, ok := toolPaths["wrk"]; ok {
		out, _ := exec.Command(p, "-v").CombinedOutput()
		line, _, _ := strings.Cut(string(out), "\n")
		m.Versions["wrk"] = strings.TrimSpace(strings.TrimSuffix(line, "Copyright (C) 2012 Will Glozer"))
	}
	if p, ok := toolPaths["nginx"]; ok {
		out, _ := exec.Command(p, "-v").CombinedOutput()
		m.Versions["nginx"] = strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
	}
}

// moduleVersion reads the version of module mod that binary bin was built with, from the build
// information Go embeds in every binary.
func moduleVersion(bin, mod string) string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return ""
	}
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 3 && (f[0] == "dep" || f[0] == "mod") && f[1] == mod {
			return f[2]
		}
	}
	return ""
}
