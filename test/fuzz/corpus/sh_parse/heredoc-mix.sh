cat <<A <<-B; echo $(cat <<C
c
C
)
a
A
	b
	B
