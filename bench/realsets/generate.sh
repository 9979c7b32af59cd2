#!/usr/bin/env bash
# generate.sh builds complete real-size table sets with the reference
# generators, outside the repository: the 3-, 4- and 5-piece Syzygy set
# (syzygy1/tb) and every chesstb material up to 5 pieces (noobpwnftw/chesstb),
# plus DTM/DTM50 for a few 5-piece materials, in full and shipping form.
# Every step is skipped when its output already verifies, so an interrupted
# run is resumed by starting it again. See README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: generate.sh --tb DIR --chesstb DIR --out DIR [options]

  --tb DIR        syzygy1/tb checkout whose src/ holds built rtbgen, rtbgenp, tbcheck
  --chesstb DIR   noobpwnftw/chesstb checkout holding built chesstb and shrink
  --out DIR       output root: syzygy/, chesstb/full/, chesstb/shipped/, timings.tsv
  --threads N     generator threads (default 1)
  --steps LIST    comma list of steps, in order (default syzygy,chesstb,dtm,shrink,verify)
                    syzygy   all 145 Syzygy tables up to 5 pieces (.rtbw + .rtbz)
                    chesstb  every chesstb material up to 5 pieces: WDL, DTZ, and DTC for pawnful
                    dtm      DTM and DTM50 for the --dtm materials (and their closures)
                    shrink   the shipping form of chesstb/full in chesstb/shipped
                    verify   tbcheck every Syzygy file and compare with syzygy1/tb's checksums/
                    summary  print timings.tsv by table class (not in the default list)
  --dtm LIST      comma list of materials for the dtm step (default KRPKR: its
                    closure adds the 5-piece KQRKR, KRRKR, KRBKR and KRNKR, into
                    which it promotes, and every 3- and 4-piece material)
  --mem MiB       chesstb's resident table cap per material (default: the
                    generator's own)
  --max N         largest piece count (default 5)
EOF
}

threads=1
steps=syzygy,chesstb,dtm,shrink,verify
dtm=KRPKR
mem=
maxpcs=5
tb=
ctb=
out=
while (($#)); do
	case $1 in
	--tb) tb=$2; shift 2 ;;
	--chesstb) ctb=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--dtm) dtm=$2; shift 2 ;;
	--max) maxpcs=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "generate.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
if [[ -z $tb || -z $ctb || -z $out ]]; then
	usage >&2
	exit 2
fi
tb=$(realpath "$tb")
ctb=$(realpath "$ctb")
mkdir -p "$out"
out=$(realpath "$out")
timings=$out/timings.tsv
[[ -f $timings ]] || printf 'format\tmaterial\tstep\tseconds\tpeak_kib\texit\tcpu_seconds\n' >"$timings"

# Progress lines go to the script's own standard output (fd 3), also from
# inside the steps whose generator output is sent to a log file.
exec 3>&1
log() { printf '%s %s\n' "$(date -u +%FT%TZ)" "$*" >&3; }

need() {
	[[ -x $1 ]] || { echo "generate.sh: $1 is not an executable; build the generator first" >&2; exit 1; }
}

# timed FORMAT MATERIAL STEP CMD... runs CMD under GNU time, appends its wall
# time, peak resident size and CPU time (user + system; on a shared machine
# the steadier figure) to timings.tsv and returns CMD's exit status.
timed() {
	local format=$1 material=$2 step=$3
	shift 3
	local tf
	tf=$(mktemp)
	local rc=0
	/usr/bin/time -o "$tf" -f '%e %M %U %S' "$@" || rc=$?
	local secs kib usr sys cpu
	read -r secs kib usr sys < <(tail -n1 "$tf") || true
	rm -f "$tf"
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$format" "$material" "$step" "$secs" "$kib" "$rc" "$cpu" >>"$timings"
	log "$format $material $step: ${secs}s wall, ${cpu}s CPU, peak ${kib} KiB, exit $rc"
	return "$rc"
}

# pieces NAME counts the men of a material name (either naming style).
pieces() { local s=${1//v/}; echo "${#s}"; }
pawns() { local s=${1//[^P]/}; echo "${#s}"; }

# syzygy_list prints every Syzygy table up to maxpcs pieces in an order that
# generates each table after the tables it converts into: fewer men first,
# then fewer pawns (a promotion keeps the count of men and loses a pawn).
syzygy_list() {
	local n
	for n in $(sed -n 's/\.rtbw:.*//p' "$tb/checksums/wdl345.txt"); do
		(($(pieces "$n") <= maxpcs)) && printf '%d %d %s\n' "$(pieces "$n")" "$(pawns "$n")" "$n"
	done | sort -k1,1n -k2,2n -k3,3 | cut -d' ' -f3
}

# syzygy_ok NAME reports whether both files of NAME carry a valid embedded
# checksum.
syzygy_ok() {
	local d=$out/syzygy
	[[ -s $d/$1.rtbw && -s $d/$1.rtbz ]] || return 1
	(cd "$d" && "$tb/src/tbcheck" "$1.rtbw" "$1.rtbz") 2>/dev/null | grep -c ': OK!$' | grep -qx 2
}

step_syzygy() {
	need "$tb/src/rtbgen"
	need "$tb/src/rtbgenp"
	need "$tb/src/tbcheck"
	local d=$out/syzygy work=$out/syzygy/.work
	mkdir -p "$d" "$work"
	local n gen
	for n in $(syzygy_list); do
		if syzygy_ok "$n"; then
			continue
		fi
		gen=rtbgen
		[[ $n == *P* ]] && gen=rtbgenp
		rm -f "$work"/*
		# The generator writes into its working directory and reads the
		# finished smaller tables through RTBPATH; files move into place only
		# once they verify, so a killed run leaves nothing half written.
		if ! (cd "$work" && timed syzygy "$n" "$gen" env RTBPATH="$d" "$tb/src/$gen" -t "$threads" "$n" >"$work/$n.log" 2>&1); then
			log "syzygy $n: $gen failed, see $work/$n.log"
			return 1
		fi
		mv "$work/$n.rtbw" "$work/$n.rtbz" "$d/"
		if ! syzygy_ok "$n"; then
			log "syzygy $n: generated files do not verify with tbcheck"
			return 1
		fi
	done
	log "syzygy: $(ls "$d"/*.rtbw | wc -l) WDL and $(ls "$d"/*.rtbz | wc -l) DTZ files"
}

step_verify() {
	need "$tb/src/tbcheck"
	local d=$out/syzygy report=$out/syzygy-checksums.txt bad k n
	# The published lists, cut to the tables this run makes.
	for k in wdl dtz; do
		while IFS= read -r line; do
			n=${line%%.rtb*}
			(($(pieces "$n") <= maxpcs)) && printf '%s\n' "$line"
		done <"$tb/checksums/${k}345.txt" >"$out/syzygy-$k-published.txt"
	done
	# tbcheck --compare opens each listed file in its working directory and
	# exits 0 whatever it finds, so its lines are counted instead.
	(cd "$d" && "$tb/src/tbcheck" --compare "$out/syzygy-wdl-published.txt" "$out/syzygy-dtz-published.txt") >"$report" 2>&1 || true
	bad=$(grep -vc ': OK!$' "$report" || true)
	log "verify: $(grep -c ': OK!$' "$report" || true) of $(cat "$out"/syzygy-*-published.txt | wc -l) files match syzygy1/tb's published checksums, $bad other lines (see $report)"
	[[ $bad == 0 ]]
}

# ctbflags are the generator flags every chesstb step passes.
ctbflags() {
	printf '%s\n' -t "$threads"
	[[ -z $mem ]] || printf '%s\n' --mem "$mem"
}

# chesstb_list prints every canonical chesstb material up to maxpcs pieces.
chesstb_list() { "$ctb/chesstb" --enumerate "$maxpcs"; }

# patched reports whether the chesstb source carries
# chesstb-symmetric-dtc.patch: without it the generator dies (SIGFPE) on the
# DTC of a symmetric pawnful material (KPKP), which every 5-piece DTC with
# pawns on both sides needs.
patched() {
	grep -q 'for (Color c : table_colors())' "$ctb/src/egtb/egtb_gen_dtc.cpp"
}

step_chesstb() {
	need "$ctb/chesstb"
	if ! patched; then
		echo "generate.sh: $ctb is built without chesstb-symmetric-dtc.patch (see README.md)" >&2
		return 1
	fi
	local d=$out/chesstb/full
	mkdir -p "$d"
	local n
	for n in $(chesstb_list); do
		# The generator expands a material into its dependency closure and
		# skips finished tables, so the list order only sets the log's order.
		if [[ -s $d/wdl/$n.lzw && -s $d/dtz/$n.lzdtz && ($n != *P* || -s $d/dtc/$n.lzdtc) ]]; then
			continue
		fi
		if ! (cd "$d" && timed chesstb "$n" wdl-dtz-dtc "$ctb/chesstb" -r "$n" --builddtc $(ctbflags) >>"$d/gen.log" 2>&1); then
			log "chesstb $n: generator failed, see $d/gen.log"
			return 1
		fi
	done
	log "chesstb: $(ls "$d"/wdl/*.lzw | wc -l) WDL, $(ls "$d"/dtz/*.lzdtz | wc -l) DTZ, $(ls "$d"/dtc/*.lzdtc | wc -l) DTC files"
}

step_dtm() {
	need "$ctb/chesstb"
	local d=$out/chesstb/full
	mkdir -p "$d"
	local n
	for n in ${dtm//,/ }; do
		if [[ -s $d/dtm/$n.lzdtm && -s $d/dtm50/$n.lzdtm50 ]]; then
			continue
		fi
		if ! (cd "$d" && timed chesstb "$n" dtm-dtm50 "$ctb/chesstb" -r "$n" --builddtc --builddtm --builddtm50 $(ctbflags) >>"$d/gen.log" 2>&1); then
			log "chesstb $n: DTM generation failed, see $d/gen.log"
			return 1
		fi
	done
	log "dtm: $(ls "$d"/dtm/*.lzdtm | wc -l) DTM, $(ls "$d"/dtm50/*.lzdtm50 | wc -l) DTM50 files"
}

step_shrink() {
	need "$ctb/shrink"
	local full=$out/chesstb/full ship=$out/chesstb/shipped m
	# shrink --out writes one flat folder; the shipping set keeps the
	# generator's layout, so each metric folder is shrunk on its own.
	for m in wdl dtz dtc dtm dtm50; do
		[[ -d $full/$m ]] || continue
		mkdir -p "$ship/$m"
		if ! timed chesstb "$m" shrink "$ctb/shrink" --out "$ship/$m" "$full/$m" >>"$out/chesstb/shrink.log" 2>&1; then
			log "shrink $m failed, see $out/chesstb/shrink.log"
			return 1
		fi
	done
	log "shrink: $(du -sh "$full" | cut -f1) full, $(du -sh "$ship" | cut -f1) shipped"
}

# step_summary prints timings.tsv by table class (format, men, with or
# without pawns, step): tables, total and largest wall time, largest peak
# resident size. A material timed twice (a resumed run) counts its last run.
step_summary() {
	printf '%-40s %6s %10s %10s %10s %12s\n' class tables 'wall s' 'max s' 'CPU s' 'max peak MiB' >&3
	awk -F'\t' 'NR > 1 && $6 == 0 { key = $1 "\t" $2 "\t" $3; last[key] = $4 "\t" $5 "\t" $7 }
	END {
		for (k in last) {
			split(k, f, "\t"); split(last[k], v, "\t")
			m = f[2]; gsub("v", "", m)
			cls = f[1] " " f[3] " " (f[1] == "chesstb" && f[3] == "shrink" ? f[2] : length(m) "-piece " (m ~ /P/ ? "pawnful" : "pawnless"))
			n[cls]++; t[cls] += v[1]
			if (v[3] != "") { nc[cls]++; cpu[cls] += v[3] }
			if (v[1] > tmax[cls]) tmax[cls] = v[1]
			if (v[2] > rss[cls]) rss[cls] = v[2]
		}
		for (c in n) printf "%-40s %6d %10.0f %10.0f %10s %12.0f\n", c, n[c], t[c], tmax[c], (nc[c] ? sprintf("%.0f", cpu[c]) (nc[c] < n[c] ? "*" : "") : "-"), rss[c] / 1024
	}' "$timings" | sort >&3
	log "wall time on a shared machine; CPU s: user + system (* over only some of the tables, - not measured)"
}

log "generate.sh: steps $steps, $threads thread(s), up to $maxpcs pieces, output $out"
for s in ${steps//,/ }; do
	case $s in
	syzygy | chesstb | dtm | shrink | verify | summary) log "step $s"; "step_$s" ;;
	*) echo "generate.sh: unknown step $s" >&2; exit 2 ;;
	esac
done
log "generate.sh: done"
