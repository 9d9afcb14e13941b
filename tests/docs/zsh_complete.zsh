# Prints, one per line, what zsh's completion system offers on TAB after WORDS, with the completion
# function found in FPATH_DIR (or in zsh's own $fpath when FPATH_DIR is ""):
#     zsh -f tests/docs/zsh_complete.zsh FPATH_DIR 'nicmatrix sw'
# It runs an interactive zsh in a pseudo-terminal (zsh/zpty), loads compinit, wraps compadd to print
# every match it is given, types WORDS and a TAB, and reads until the matches have stopped coming (a
# deadline of 10 s when none come).
zmodload zsh/zpty zsh/datetime
local dir=$1 words=$2 tmp
tmp=$(mktemp -d) || exit 1
zpty nmz zsh -f -i
[[ -n $dir ]] && zpty -w nmz "fpath=(${(q)dir} \$fpath)"
zpty -w nmz "PROMPT=''; autoload -U compinit; compinit -u -d ${(q)tmp}/zcompdump"
zpty -w nmz 'compadd() { builtin compadd "$@"; local -a m; builtin compadd -O m "$@"; print -l -- "" "<<${^m}>>"; }'
zpty -w nmz 'print nm-ready-$((6*7))'
zpty -r nmz line '*nm-ready-42*'
zpty -w -n nmz "$words"$'\t'
local out chunk
float deadline=$(( EPOCHREALTIME + 10 )) quiet_since=0
while (( EPOCHREALTIME < deadline )); do
  if zpty -r -t nmz chunk; then
    out+=$chunk
    quiet_since=0
  else
    if [[ $out == *'<<'* ]]; then
      (( quiet_since == 0 )) && quiet_since=$EPOCHREALTIME
      (( EPOCHREALTIME - quiet_since > 0.5 )) && break
    fi
    sleep 0.05
  fi
done
zpty -d nmz
rm -rf -- $tmp
print -r -- ${out//$'\r'/} | grep -ao '<<[^>]*>>' | sed 's/^<<//; s/>>$//' | grep -v '^$' | sort -u
