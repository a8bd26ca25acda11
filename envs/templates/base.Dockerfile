# autoinstall base image, rendered by envs/baseimage.py with string.Template (a doubled dollar is a literal one).
FROM ${base}
ARG DEBIAN_FRONTEND=noninteractive
ENV LANG=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1
# The host's CA in every client, as in the sandboxes (envs/docker/trust.py): the trust files and CA_ENV.
COPY trust/ ${trust_dir}/
ENV ${trust_env}
RUN apt-get update \
 && apt-get install -y --no-install-recommends ${apt_packages} \
 && ${trust_setup} \
 && rm -rf /var/lib/apt/lists/*
RUN ${python} -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir ${uv_requirement} \
 && /opt/venv/bin/uv --version
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$$PATH
WORKDIR /workspace
CMD ["sleep", "infinity"]
