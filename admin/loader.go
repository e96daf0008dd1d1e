package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/loader"
)

// Loader parameter names of POST /loader, as the flags name them with '_'.
const (
	paramFiles     = "loader_files"
	paramSleep     = "loader_sleep"
	paramThreshold = "loader_threshold"
	paramCPU       = "loader_cpu"
)

// ParamError is a bad POST /loader request: the field it names is missing,
// malformed or out of range.
type ParamError struct {
	Field string
	Err   error
}

func (e *ParamError) Error() string {
	if e.Field == "" || strings.HasPrefix(e.Err.Error(), e.Field+" ") {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *ParamError) Unwrap() error { return e.Err }

// loaderReply is the reply of POST /loader: the parameters in the
// request's own notation.
type loaderReply struct {
	Files     int    `json:"loader_files"`
	Sleep     string `json:"loader_sleep"`
	Threshold string `json:"loader_threshold"`
	CPU       string `json:"loader_cpu"`
	CPUMode   bool   `json:"cpu_mode"`
}

func replyOf(p loader.Params) loaderReply {
	return loaderReply{
		Files: p.Files, Sleep: p.Sleep.String(), Threshold: p.Threshold.String(),
		CPU: strconv.FormatFloat(p.CPU*100, 'f', -1, 64) + "%", CPUMode: p.CPUMode(),
	}
}

// loader handles POST /loader: it changes the given parameters of the
// loader (the others keep their values) and replies with the new ones.
func (h *handler) loader(w http.ResponseWriter, r *http.Request) {
	fields, err := readLoaderFields(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpError(w, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.Itoa(maxBodyBytes)+" bytes")
			return
		}
		paramErrorReply(w, err)
		return
	}
	p, err := applyLoaderFields(h.b.Status().Loader.Params, fields)
	if err != nil {
		paramErrorReply(w, err)
		return
	}
	if err := h.b.SetLoaderParams(p); err != nil {
		h.log.Error("set loader parameters", "err", err)
		httpError(w, http.StatusInternalServerError, "set loader parameters: "+err.Error())
		return
	}
	h.log.Info("loader parameters changed", "files", p.Files, "sleep", p.Sleep,
		"threshold", p.Threshold, "cpu", p.CPU, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, replyOf(p))
}

// paramErrorReply answers 400 with {"error": message, "field": name}.
func paramErrorReply(w http.ResponseWriter, err error) {
	reply := map[string]string{"error": err.Error()}
	var pe *ParamError
	if errors.As(err, &pe) && pe.Field != "" {
		reply["field"] = pe.Field
	}
	writeJSON(w, http.StatusBadRequest, reply)
}

// readLoaderFields reads the body: a form (application/x-www-form-urlencoded)
// or a JSON object of strings and numbers. Every value comes back as a string.
func readLoaderFields(r *http.Request) (map[string]string, error) {
	body := new(bytes.Buffer)
	if _, err := body.ReadFrom(r.Body); err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		return jsonFields(body.Bytes())
	case "application/x-www-form-urlencoded", "":
		return formFields(body.String())
	}
	return nil, &ParamError{Err: fmt.Errorf("content type %q: want application/json or application/x-www-form-urlencoded", ct)}
}

func formFields(body string) (map[string]string, error) {
	vs, err := url.ParseQuery(body)
	if err != nil {
		return nil, &ParamError{Err: fmt.Errorf("parse form: %w", err)}
	}
	fields := make(map[string]string, len(vs))
	for k, v := range vs {
		if len(v) != 1 {
			return nil, &ParamError{k, errors.New("given more than once")}
		}
		fields[k] = v[0]
	}
	return fields, nil
}

// jsonFields reads a JSON object of strings and numbers. A key given twice
// is refused, as in a form (encoding/json would keep the last one).
func jsonFields(body []byte) (map[string]string, error) {
	raw, err := jsonObject(body)
	if err != nil {
		return nil, err
	}
	fields := make(map[string]string, len(raw))
	for _, kv := range raw {
		k, v := kv.key, kv.value
		if _, dup := fields[k]; dup {
			return nil, &ParamError{k, errors.New("given more than once")}
		}
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			fields[k] = s
			continue
		}
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, &ParamError{k, errors.New("want a string or a number")}
		}
		fields[k] = n.String()
	}
	return fields, nil
}

type jsonMember struct {
	key   string
	value json.RawMessage
}

// jsonObject splits one JSON object into its members, in order, keeping
// duplicates; anything but exactly one object is an error.
func jsonObject(body []byte) ([]jsonMember, error) {
	bad := func(err error) error { return &ParamError{Err: fmt.Errorf("parse JSON object: %w", err)} }
	if !json.Valid(body) {
		var v any
		return nil, bad(json.Unmarshal(body, &v))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, bad(errors.New("not an object"))
	}
	var members []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		var m jsonMember
		m.key, _ = tok.(string) // a valid object's keys are strings
		if err := dec.Decode(&m.value); err != nil {
			return nil, bad(err)
		}
		members = append(members, m)
	}
	return members, nil
}

// applyLoaderFields sets the named fields on p and validates the result.
func applyLoaderFields(p loader.Params, fields map[string]string) (loader.Params, error) {
	if len(fields) == 0 {
		return p, &ParamError{Err: errors.New("no parameter given: want loader_files, loader_sleep, loader_threshold or loader_cpu")}
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		var err error
		switch k {
		case paramFiles:
			if p.Files, err = strconv.Atoi(v); err != nil {
				err = fmt.Errorf("%q: want an integer", v)
			}
		case paramSleep:
			p.Sleep, err = parseParamDuration(v)
		case paramThreshold:
			p.Threshold, err = parseParamDuration(v)
		case paramCPU:
			p.CPU, err = loader.ParseCPU(v)
		default:
			err = errors.New("unknown parameter: want loader_files, loader_sleep, loader_threshold or loader_cpu")
		}
		if err != nil {
			return p, &ParamError{k, err}
		}
	}
	if err := p.Validate(); err != nil {
		// Validate names the parameter first: "loader_files must be >= 1".
		field, _, _ := strings.Cut(err.Error(), " ")
		return p, &ParamError{field, err}
	}
	return p, nil
}

func parseParamDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf(`%q: want a duration such as "50ms" or "1s"`, v)
	}
	return d, nil
}
