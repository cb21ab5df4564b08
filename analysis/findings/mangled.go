package findings

import (
	"slices"
	"strings"
)

// mangledKernel is what KernelName reads from a kernel name written
// mangled (the Itanium C++ ABI's encoding, as HIP traces write kernels):
// the function's qualified name, the first template argument that is a
// type (the kernel a wrapper runs), and the function a template argument
// takes the address of. Only these parts are read, by a reader of the few
// productions they use: a full demangler would add a quarter of a
// megabyte to the report's viewer module, and KernelName drops the
// template arguments of a mangled name anyway.
type mangledKernel struct {
	name  []string // the qualified name: ["ck_tile", "kentry"]
	first []string // the first type argument: ["ck_tile", "Rmsnorm2dFwd"]; nil for none
	fn    string   // the function an argument takes the address of: "silu_kernel"
}

// label is the kernel's readable name: the kernel a wrapper runs, else
// the function; an at::native kernel without its namespaces, as
// KernelName names those written out; the function an argument names
// after it.
func (m mangledKernel) label() string {
	parts := m.name
	if slices.Contains(kernelWrappers, strings.Join(parts, "::")) && len(m.first) > 0 {
		parts = m.first
	}
	if len(parts) > 2 && parts[0] == "at" && parts[1] == "native" {
		parts = parts[len(parts)-1:]
	}
	out := strings.Join(parts, "::")
	if m.fn != "" {
		out += " (" + m.fn + ")"
	}
	return out
}

// readMangled reads a mangled kernel name, with or without a leading
// "void "; ok is false for a name that is not mangled or whose name this
// reader cannot follow.
func readMangled(n string) (mangledKernel, bool) {
	s, ok := strings.CutPrefix(strings.TrimPrefix(n, "void "), "_Z")
	if !ok {
		return mangledKernel{}, false
	}
	r := &mangledReader{s: s}
	name, ok := r.name()
	if !ok || len(name) == 0 {
		return mangledKernel{}, false
	}
	// The first substitution candidate (S_) is the name's first prefix:
	// its outermost namespace.
	r.first = name[0]
	m := mangledKernel{name: name}
	if r.next('I') {
		m.first = r.firstType()
	}
	if i := strings.Index(s, "XadL_Z"); i >= 0 {
		fr := &mangledReader{s: s[i+len("XadL_Z"):], first: r.first}
		if fn, ok := fr.name(); ok && len(fn) > 0 {
			m.fn = fn[len(fn)-1]
		}
	}
	return m, true
}

// mangledReader reads productions of a mangled name from s at i.
type mangledReader struct {
	s     string
	i     int
	first string // what the substitution S_ stands for; "" for unknown
}

// next consumes c when it comes next.
func (r *mangledReader) next(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// name reads a nested name (N … E, or up to its template arguments) or
// an unscoped one, as its components; anonymous namespaces are left out.
func (r *mangledReader) name() ([]string, bool) {
	if !r.next('N') {
		return r.component()
	}
	for r.i < len(r.s) && strings.IndexByte("rVK", r.s[r.i]) >= 0 {
		r.i++ // qualifiers of a member function
	}
	var parts []string
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case 'E':
			r.i++
			return parts, true
		case 'I':
			return parts, true // the template arguments: the caller reads them
		}
		p, ok := r.component()
		if !ok {
			return nil, false
		}
		parts = append(parts, p...)
	}
	return nil, false
}

// component reads one source name (its length, then itself), std's
// abbreviation St, or the substitution S_; none for an anonymous
// namespace.
func (r *mangledReader) component() ([]string, bool) {
	switch {
	case strings.HasPrefix(r.s[r.i:], "St"):
		r.i += 2
		return []string{"std"}, true
	case strings.HasPrefix(r.s[r.i:], "S_"):
		r.i += 2
		if r.first == "" {
			return nil, false
		}
		return []string{r.first}, true
	}
	j := r.i
	for j < len(r.s) && r.s[j] >= '0' && r.s[j] <= '9' {
		j++
	}
	if j == r.i {
		return nil, false
	}
	n := 0
	for _, c := range r.s[r.i:j] {
		n = n*10 + int(c-'0')
		if n > len(r.s) {
			return nil, false
		}
	}
	if j+n > len(r.s) || n == 0 {
		return nil, false
	}
	id := r.s[j : j+n]
	r.i = j + n
	if strings.HasPrefix(id, "_GLOBAL__N") {
		return nil, true // an anonymous namespace
	}
	return []string{id}, true
}

// firstType reads template arguments up to the first that is a named
// type and returns its name; nil where an argument before it is not a
// literal this reader can skip.
func (r *mangledReader) firstType() []string {
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == 'N' || (c >= '0' && c <= '9'):
			t, ok := r.name()
			if !ok {
				return nil
			}
			return t
		case c == 'L' && !strings.HasPrefix(r.s[r.i:], "L_Z"):
			// A literal: its type (a builtin's one letter, or a
			// named enum's name), its value, then E.
			r.i++
			if r.s[r.i:] != "" && (r.s[r.i] == 'N' || (r.s[r.i] >= '0' && r.s[r.i] <= '9')) {
				if _, ok := r.name(); !ok {
					return nil
				}
			}
			e := strings.IndexByte(r.s[r.i:], 'E')
			if e < 0 {
				return nil
			}
			r.i += e + 1
		default:
			return nil
		}
	}
	return nil
}
