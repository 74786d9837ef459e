trap "echo got INT" INT; kill -INT $$; echo after
