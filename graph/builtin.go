package graph

import (
	"fmt"
	"strings"
)

// The built-in graph templates, in the text form a profiles file uses (and
// parsed by the same parser): per interface of the if-mib profile's table
// (data sources in, out, inpkt, outpkt, inerr, outerr, indisc, outdisc),
// and for the host profile (cpu_*, load*, mem_*), its storage table (units,
// size, used: hrStorageAllocationUnits, hrStorageSize, hrStorageUsed) and
// its processor table (load: hrProcessorLoad).
const builtinGraphText = `
graph traffic
  title   {target} {instance} ({alias}) traffic
  vlabel  bits per second
  lower   0
  def     in   in
  def     out  out
  cdef    inbits  in,8,*
  cdef    outbits out,8,*
  vdef    in_avg  inbits,AVERAGE
  vdef    in_max  inbits,MAXIMUM
  vdef    in_95   inbits,95,PERCENTNAN
  vdef    out_avg outbits,AVERAGE
  vdef    out_max outbits,MAXIMUM
  vdef    out_95  outbits,95,PERCENTNAN
  area    inbits  00C000 "In "
  gprint  in_avg  avg %5.1lf %sb/s
  gprint  in_max  max %5.1lf %sb/s
  gprint  in_95   95th %5.1lf %sb/s\l
  line    outbits 0000FF width=1.5 Out
  gprint  out_avg avg %5.1lf %sb/s
  gprint  out_max max %5.1lf %sb/s
  gprint  out_95  95th %5.1lf %sb/s\l
  hrule   in_95   008000
  hrule   out_95  000080

graph packets
  title   {target} {instance} ({alias}) unicast packets
  vlabel  packets per second
  lower   0
  def     inpkt   inpkt
  def     outpkt  outpkt
  vdef    in_avg  inpkt,AVERAGE
  vdef    in_max  inpkt,MAXIMUM
  vdef    out_avg outpkt,AVERAGE
  vdef    out_max outpkt,MAXIMUM
  area    inpkt   00C000 "In "
  gprint  in_avg  avg %6.2lf %s
  gprint  in_max  max %6.2lf %s\l
  line    outpkt  0000FF width=1.5 Out
  gprint  out_avg avg %6.2lf %s
  gprint  out_max max %6.2lf %s

graph errors
  title   {target} {instance} ({alias}) errors and discards
  vlabel  per second
  lower   0
  def     inerr   inerr
  def     outerr  outerr
  def     indisc  indisc
  def     outdisc outdisc
  vdef    inerr_max   inerr,MAXIMUM
  vdef    outerr_max  outerr,MAXIMUM
  vdef    indisc_max  indisc,MAXIMUM
  vdef    outdisc_max outdisc,MAXIMUM
  line    inerr   FF0000 width=1.5 "In errors    "
  gprint  inerr_max   max %6.2lf %s\l
  line    outerr  A000A0 width=1.5 "Out errors   "
  gprint  outerr_max  max %6.2lf %s\l
  line    indisc  FF8000 "In discards  "
  gprint  indisc_max  max %6.2lf %s\l
  line    outdisc 808000 "Out discards "
  gprint  outdisc_max max %6.2lf %s

graph cpu
  title   {target} CPU
  vlabel  percent
  lower   0
  upper   100
  def     user   cpu_user
  def     system cpu_system
  def     idle   cpu_idle
  cdef    total  user,system,+,idle,+
  cdef    userp  user,total,/,100,*
  cdef    sysp   system,total,/,100,*
  vdef    user_avg userp,AVERAGE
  vdef    sys_avg  sysp,AVERAGE
  area    sysp   FF0000 "System "
  gprint  sys_avg  avg %5.1lf%%\l
  area    userp  0000FF stack "User   "
  gprint  user_avg avg %5.1lf%%

graph load
  title   {target} load average
  vlabel  load
  units   none
  lower   0
  def     l1     load1
  def     l5     load5
  def     l15    load15
  cdef    load_1  l1,100,/
  cdef    load_5  l5,100,/
  cdef    load_15 l15,100,/
  vdef    max_1   load_1,MAXIMUM
  line    load_1  FF8000 "1 min  "
  gprint  max_1   max %5.2lf\l
  line    load_5  0000FF "5 min"
  line    load_15 00A000 width=2 "15 min"

graph memory
  title   {target} memory
  vlabel  bytes
  base    1024
  lower   0
  def     total  mem_total
  def     avail  mem_avail
  def     buffer mem_buffer
  def     cached mem_cached
  cdef    used_b   total,avail,-,buffer,-,cached,-,1024,*
  cdef    buffer_b buffer,1024,*
  cdef    cached_b cached,1024,*
  cdef    free_b   avail,1024,*
  vdef    used_max used_b,MAXIMUM
  area    used_b   FF0000 "Used    "
  gprint  used_max max %6.2lf %sB\l
  area    buffer_b FF8000 stack Buffers
  area    cached_b FFD000 stack Cached
  area    free_b   00C000 stack Free

graph storage
  title   {target} {instance} storage
  vlabel  bytes
  base    1024
  lower   0
  def     units  units
  def     size   size
  def     used   used
  cdef    size_b size,units,*
  cdef    used_b used,units,*
  vdef    used_last used_b,LAST
  vdef    size_last size_b,LAST
  area    used_b 0000FF "Used "
  gprint  used_last %6.2lf %sB
  gprint  size_last of %6.2lf %sB\l
  line    size_b 000000 Size

graph processor
  title   {target} processor {instance}
  vlabel  percent
  lower   0
  upper   100
  def     load   load
  vdef    load_avg load,AVERAGE
  vdef    load_max load,MAXIMUM
  area    load   0000FF "Load "
  gprint  load_avg avg %5.1lf%%
  gprint  load_max max %5.1lf%%\l
`

var builtinGraphs = mustParseGraphs("built-in graph templates", builtinGraphText)

// Builtins returns the built-in graph templates, in the order
// a page shows them: traffic, packets, errors (an interface), cpu, load,
// memory (a host), storage and processor (a host's storage and processor
// rows). The templates are
// shared: do not change them.
func Builtins() []*Template { return append([]*Template(nil), builtinGraphs...) }

// Builtin returns the built-in template of that name.
func Builtin(name string) (*Template, bool) {
	for _, t := range builtinGraphs {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// mustParseGraphs parses the graph blocks of text, which has nothing else.
func mustParseGraphs(file, text string) []*Template {
	var out []*Template
	var header SourceLine
	var block []SourceLine
	flush := func() {
		if header.Text == "" {
			return
		}
		t, err := ParseTemplate(file, header, block)
		if err != nil {
			panic(fmt.Sprintf("built-in graph template: %v", err))
		}
		out = append(out, t)
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "graph "):
			flush()
			header, block = SourceLine{i + 1, line}, nil
		default:
			block = append(block, SourceLine{i + 1, line})
		}
	}
	flush()
	return out
}
