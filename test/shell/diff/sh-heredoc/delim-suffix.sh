cat <<END
END not
END
