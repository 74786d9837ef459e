# bracket expressions: collating symbols [.c.] [.NAME.], equivalence classes [=c=], [:ascii:]
for c in a - p ' ' 4 c '	' b B x; do
	r=
	case $c in [[.a.]]) r+=1 ;; esac
	case $c in [[.hyphen.]-9]) r+=2 ;; esac
	case $c in [[.a.]-[.z.]]) r+=3 ;; esac
	case $c in [[.space.]]) r+=4 ;; esac
	case $c in [[.yyz.]-[.z.]]) r+=5 ;; esac
	case $c in [[.yyz.][.a.]-z]) r+=6 ;; esac
	case $c in [[.a.]-[.zz.]p]) r+=7 ;; esac
	case $c in [[.space.][.tab.][.newline.]]) r+=8 ;; esac
	case $c in [[=b=]]) r+=9 ;; esac
	case $c in [[:ascii:]]) r+=A ;; esac
	case $c in [[=b=]) r+=B ;; esac
	[[ $c == [![.-.]x] ]] && r+=C
	echo "<$c> $r"
done
