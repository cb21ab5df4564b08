package findings

import (
	"slices"
	"strings"
)

// mangledKernel is what KernelName and KernelTemplate read from a kernel
// name written mangled (the Itanium C++ ABI's encoding, as HIP traces
// write kernels): the function's qualified name, the first template
// argument that is a type (the kernel a wrapper runs), the function a
// template argument takes the address of, and the template arguments
// where each is a builtin type, a literal or a name. Only these parts are
// read, by a reader of the few productions they use: a full demangler
// would add a quarter of a megabyte to the report's viewer module, and
// a reader reads kernel names without most of their arguments anyway.
type mangledKernel struct {
	name  []string // the qualified name: ["ck_tile", "kentry"]
	first []string // the first type argument: ["ck_tile", "Rmsnorm2dFwd"]; nil for none
	fn    string   // the function an argument takes the address of: "silu_kernel"
	args  []string // the template arguments, where each is a builtin type, a literal or a name: ["bf16", "64", "true"]; nil otherwise
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
		at := r.i
		m.first = r.firstType()
		r.i = at
		m.args = r.templateArgs()
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

// builtinTypes are the one- and two-letter codes of the builtin types a
// kernel's template arguments use, as a reader writes them.
var builtinTypes = map[string]string{
	"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
	"t": "unsigned short", "i": "int", "j": "unsigned", "l": "long", "m": "unsigned long",
	"x": "long long", "y": "unsigned long long", "f": "float", "d": "double",
	"DF16b": "bf16", "DF16_": "_Float16", "Dh": "half",
}

// builtin reads a builtin type's code.
func (r *mangledReader) builtin() (string, bool) {
	for _, n := range []int{5, 2, 1} {
		if r.i+n <= len(r.s) {
			if t, ok := builtinTypes[r.s[r.i:r.i+n]]; ok {
				r.i += n
				return t, true
			}
		}
	}
	return "", false
}

// templateArgs reads template arguments up to their E, each a builtin
// type, a literal of one (a bool as true or false) or a name (its own
// arguments shown as <…>); nil for any other argument.
func (r *mangledReader) templateArgs() []string {
	var out []string
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == 'E':
			r.i++
			return out
		case c == 'L':
			r.i++
			t, ok := r.builtin()
			if !ok {
				return nil
			}
			e := strings.IndexByte(r.s[r.i:], 'E')
			if e < 0 {
				return nil
			}
			v := strings.Replace(r.s[r.i:r.i+e], "n", "-", 1)
			r.i += e + 1
			if t == "bool" {
				v = map[string]string{"0": "false", "1": "true"}[v]
			}
			if v == "" {
				return nil
			}
			out = append(out, v)
		case c == 'N' || (c >= '0' && c <= '9') || strings.HasPrefix(r.s[r.i:], "St") || strings.HasPrefix(r.s[r.i:], "S_"):
			parts, ok := r.name()
			if !ok || len(parts) == 0 {
				return nil
			}
			a := strings.Join(parts, "::")
			if r.next('I') {
				if r.templateArgs() == nil {
					return nil
				}
				a += "<…>"
				if c == 'N' && !r.next('E') {
					return nil
				}
			}
			out = append(out, a)
		default:
			t, ok := r.builtin()
			if !ok {
				return nil
			}
			out = append(out, t)
		}
	}
	return nil
}

// template is the kernel's qualified name with its template arguments,
// as far as templateArgs reads them ("" where it does not).
func (m mangledKernel) template() string {
	if m.args == nil {
		return ""
	}
	return strings.Join(m.name, "::") + "<" + strings.Join(m.args, ", ") + ">"
}
