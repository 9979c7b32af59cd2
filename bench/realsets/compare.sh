#!/usr/bin/env bash
# compare.sh checks our readers against the reference probers on random
# positions of the real sets that generate.sh made. It draws positions over
# the materials present, asks the reference probers (chesstb's probe_fen,
# every metric and --children; Fathom, WDL, DTZ and root moves), writes their
# answers as oracle files of the shape ../shared holds, in two folders laid
# out like ../shared, and runs the repository's oracle sweeps against each
# with TBFS_SHARED pointing there: the library, tbprobe, serve and the
# mount then read the real tables and are judged by the reference rows.
# See README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: compare.sh --sets DIR --probe-fen FILE --fathom DIR [options]

  --sets DIR        generate.sh's output (syzygy/, chesstb/shipped/, chesstb/full/)
  --probe-fen FILE  noobpwnftw/chesstb's built tools/probe_fen
  --fathom DIR      jdart1/Fathom checkout (fathom_oracle is built against it)
  --work DIR        where positions, oracle files and logs go (default SETS/compare)
  --shared DIR      the reference data folder whose other parts the tests also
                    read (default: ../shared beside the repository)
  -n N              positions per format (default 10000)
  --children N      of those, how many chesstb positions list every move (default N)
  --seed S          seed of the draws (default 1)
  --steps LIST      comma list (default oracle,test)
                      oracle  draw positions and write the reference answers
                      test    run the oracle sweeps against them
EOF
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
sets= probefen= fathom= work= shared=$repo/../shared
n=10000 nkids= seed=1 steps=oracle,test
while (($#)); do
	case $1 in
	--sets) sets=$2; shift 2 ;;
	--probe-fen) probefen=$2; shift 2 ;;
	--fathom) fathom=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--shared) shared=$2; shift 2 ;;
	-n) n=$2; shift 2 ;;
	--children) nkids=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "compare.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
if [[ -z $sets || -z $probefen || -z $fathom ]]; then
	usage >&2
	exit 2
fi
nkids=${nkids:-$n}
sets=$(realpath "$sets")
probefen=$(realpath "$probefen")
fathom=$(realpath "$fathom")
shared=$(realpath "$shared")
work=${work:-$sets/compare}
mkdir -p "$work/bin"
work=$(realpath "$work")

# Progress lines go to the script's own standard output (fd 3), also from
# commands whose output is redirected to a file.
exec 3>&1
log() { printf '%s %s\n' "$(date -u +%FT%TZ)" "$*" >&3; }

# timed LABEL CMD... runs CMD and logs its wall time and peak memory.
timed() {
	local label=$1 tf rc=0 secs kib
	shift
	tf=$(mktemp)
	/usr/bin/time -o "$tf" -f '%e %M' "$@" || rc=$?
	read -r secs kib < <(tail -n1 "$tf") || true
	rm -f "$tf"
	log "$label: ${secs}s, peak ${kib} KiB, exit $rc"
	return "$rc"
}

build_tools() {
	(cd "$repo" && go build -o "$work/bin/" ./bench/realsets/randpos ./bench/realsets/probefentsv)
	cc -std=gnu99 -O2 -DTB_NO_THREADS -I "$fathom/src" -I "$fathom/src/apps" \
		"$repo/bench/realsets/fathom_oracle.c" "$fathom/src/tbprobe.c" -o "$work/bin/fathom_oracle"
}

# syzygy_materials lists the Syzygy materials with both files.
syzygy_materials() {
	local f m
	for f in "$sets"/syzygy/*.rtbw; do
		m=$(basename "$f" .rtbw)
		[[ -s $sets/syzygy/$m.rtbz ]] && echo "$m"
	done
}

# chesstb_materials lists the materials whose shipped set holds WDL and the
# DTZ row (in dtz/, or for a material with pawns in dtc/, which embeds it).
chesstb_materials() {
	local f m s=$sets/chesstb/shipped
	for f in "$s"/wdl/*.lzw; do
		m=$(basename "$f" .lzw)
		if [[ -s $s/dtz/$m.lzdtz || ($m == *P* && -s $s/dtc/$m.lzdtc) ]]; then
			echo "$m"
		fi
	done
}

# probe_fen_on LABEL FORM [--children] < fens runs probe_fen against one
# form of the chesstb set, timed, from an empty directory (it also reads
# ./wdl/ and so on when no folder is given).
probe_fen_on() {
	local label=$1 form=$2 d=$sets/chesstb/$2 args=() m empty rc=0
	shift 2
	for m in wdl dtz dtc dtm dtm50; do
		[[ -d $d/$m ]] && args+=("--$m" "$d/$m")
	done
	empty=$(mktemp -d)
	(cd "$empty" && timed "$label" xargs -d '\n' "$probefen" --cache 1024 "${args[@]}" "$@") || rc=$?
	rmdir "$empty"
	return "$rc"
}

# layout DIR FORMATS links what the tests read besides the real sets from
# the shared folder into DIR, so DIR can stand in for it; FORMATS is
# "syzygy" or "chesstb+syzygy", the parts DIR is to hold.
layout() {
	local dir=$1 formats=$2 e
	mkdir -p "$dir/syzygy/oracle"
	for e in "$shared"/*; do
		case $(basename "$e") in
		chesstb | syzygy) ;;
		*) ln -sfn "$e" "$dir/$(basename "$e")" ;;
		esac
	done
	ln -sfn "$sets/syzygy" "$dir/syzygy/tables"
	[[ $formats == chesstb+syzygy ]] || return 0
	mkdir -p "$dir/chesstb/oracle"
	for e in "$shared"/chesstb/*; do
		case $(basename "$e") in
		shipped | full | oracle) ;;
		*) ln -sfn "$e" "$dir/chesstb/$(basename "$e")" ;;
		esac
	done
	for e in "$shared"/chesstb/oracle/pair.tsv; do
		[[ -e $e ]] && ln -sfn "$e" "$dir/chesstb/oracle/"
	done
	ln -sfn "$sets/chesstb/shipped" "$dir/chesstb/shipped"
	ln -sfn "$sets/chesstb/full" "$dir/chesstb/full"
}

step_oracle() {
	build_tools
	local syz=$work/syzygy ctb=$work/chesstb mats
	# Syzygy: Fathom on positions of every Syzygy material.
	mapfile -t mats < <(syzygy_materials)
	if ((${#mats[@]})); then
		layout "$syz" syzygy
		"$work/bin/randpos" -n "$n" -seed "$seed" -hi 100 "${mats[@]}" >"$syz/positions.txt"
		timed "fathom_oracle, $n positions of ${#mats[@]} Syzygy materials" \
			"$work/bin/fathom_oracle" "$sets/syzygy" <"$syz/positions.txt" >"$syz/syzygy/oracle/probe.tsv"
		report_failed "$syz/syzygy/oracle/probe.tsv"
	else
		log "no Syzygy tables in $sets/syzygy"
	fi
	# chesstb: probe_fen on positions of every chesstb material, against
	# both forms, and Fathom on the same positions where the Syzygy set has
	# their materials, so the sweeps of both formats together can run.
	mapfile -t mats < <(chesstb_materials)
	if ((${#mats[@]})); then
		layout "$ctb" chesstb+syzygy
		local o=$ctb/chesstb/oracle
		"$work/bin/randpos" -n "$n" -seed "$seed" -hi 100 "${mats[@]}" >"$ctb/positions.txt"
		head -n "$nkids" "$ctb/positions.txt" >"$ctb/children-positions.txt"
		cut -f1 "$shared/chesstb/oracle/seed_cases.tsv" | tail -n +2 >"$ctb/seed-positions.txt"
		local form f
		for form in shipped full; do
			probe_fen_on "probe_fen $form, $n positions of ${#mats[@]} chesstb materials" \
				"$form" <"$ctb/positions.txt" >"$ctb/probe-$form.txt"
			probe_fen_on "probe_fen $form --children, $nkids positions" \
				"$form" --children <"$ctb/children-positions.txt" >"$ctb/children-$form.txt"
			probe_fen_on "probe_fen $form, seed cases" "$form" <"$ctb/seed-positions.txt" >"$ctb/seed-$form.txt"
		done
		"$work/bin/probefentsv" "$ctb/probe-shipped.txt" "$ctb/probe-full.txt" >"$o/probe.tsv"
		"$work/bin/probefentsv" -children "$ctb/children-shipped.txt" "$ctb/children-full.txt" >"$o/children.tsv"
		"$work/bin/probefentsv" "$ctb/seed-shipped.txt" "$ctb/seed-full.txt" >"$o/seed_cases.tsv"
		tail -n +2 "$o/probe.tsv" | cut -f1 | awk '!seen[$1" "$2]++' |
			"$work/bin/fathom_oracle" "$sets/syzygy" >"$ctb/syzygy/oracle/probe.tsv"
		report_failed "$ctb/syzygy/oracle/probe.tsv"
	else
		log "no chesstb tables in $sets/chesstb/shipped"
	fi
}

# report_failed names the positions Fathom could not answer (their
# materials lack a table) and drops them from the oracle file.
report_failed() {
	local f=$1 bad
	bad=$(grep -c $'\tFAILED$' "$f" || true)
	if ((bad)); then
		log "$f: Fathom failed on $bad positions (no table?); they are left out"
		grep -v $'\tFAILED$' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
	fi
}

# sweep DIR PKG REGEX runs one package's oracle sweeps against DIR.
sweep() {
	local dir=$1 pkg=$2 re=$3 name
	name=$(basename "$dir")-$(echo "$pkg" | tr / -)
	log "sweep $pkg ($re) against $dir"
	(cd "$repo" && TBFS_SHARED=$dir timed "go test $pkg" go test -count=1 -timeout 6h -run "$re" -v "./$pkg/") \
		>"$work/$name.log" 2>&1 || true
	grep -E '^(--- FAIL|ok|FAIL)' "$work/$name.log" || true
	grep -E 'mismatch|disagree|rows fail|compared|read through|SKIP' "$work/$name.log" | grep -v '^=== ' | head -40 || true
}

step_test() {
	local syz=$work/syzygy ctb=$work/chesstb
	if [[ -s $syz/syzygy/oracle/probe.tsv ]]; then
		sweep "$syz" format/syzygy '^TestSharedOracle(WDL|DTZ|Root)$'
		sweep "$syz" chessprobe '^TestOracleSyzygyOnly$'
		sweep "$syz" cmd/tbprobe '^TestProbeSyzygy$'
		sweep "$syz" fusefs '^TestMountSyzygy$'
		sweep "$syz" lichess '^TestStandardSyzygyOracle$'
	fi
	if [[ -s $ctb/chesstb/oracle/probe.tsv ]]; then
		sweep "$ctb" format/chesstb '^TestSharedOracle$'
		sweep "$ctb" chessprobe '^(TestOracleBothFormats|TestAgreeOnTheOracles)$'
		sweep "$ctb" cmd/tbprobe '^(TestProbeJSONOracle|TestProbeChildrenOracle|TestServeStandardOracle)$'
		sweep "$ctb" fusefs '^(TestPositionsOracle|TestMovesOracle)$'
		sweep "$ctb" lichess '^(TestStandardOracle|TestStandardSyzygyOracle)$'
	fi
}

log "compare.sh: steps $steps, $n positions per format, seed $seed, sets $sets, work $work"
for s in ${steps//,/ }; do
	case $s in
	oracle | test) log "step $s"; "step_$s" ;;
	*) echo "compare.sh: unknown step $s" >&2; exit 2 ;;
	esac
done
log "compare.sh: done"
